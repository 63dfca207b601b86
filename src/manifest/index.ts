// The manifest: every operation of the API, declared once. REST, OpenAPI, CLI and MCP derive from it.
import * as access from "./access";
import * as automations from "./automations";
import type { Operation } from "./define";
import * as environments from "./environments";
import * as features from "./features";
import * as projects from "./projects";
import * as runs from "./runs";

export const ops = {
  ...projects,
  ...environments,
  ...features,
  ...automations,
  ...runs,
  ...access,
};

export type Ops = typeof ops;
export type OpKey = keyof Ops;

function isOperation(v: unknown): v is Operation {
  return typeof v === "object" && v !== null && "method" in v && "path" in v && "cli" in v;
}

export const operations: Operation[] = Object.values(ops).filter(isOperation);
export const operationsByName: ReadonlyMap<string, Operation> = new Map(operations.map((o) => [o.name, o]));

export const API_PREFIX = "/api/v1/ops";

export * from "./define";
export * from "./errors";
export * from "./records";
export * from "./automation-format";
