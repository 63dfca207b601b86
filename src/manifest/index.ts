// The manifest: every operation of the API, declared once. REST, OpenAPI, CLI and MCP derive from it.
import * as access from "./access";
import * as apply from "./apply";
import * as assistant from "./assistant";
import * as alerts from "./alerts";
import * as automations from "./automations";
import type { Operation } from "./define";
import * as environments from "./environments";
import * as features from "./features";
import * as generations from "./generations";
import * as groups from "./groups";
import * as exports from "./exports";
import * as imports from "./imports";
import * as history from "./history";
import * as projects from "./projects";
import * as runners from "./runners";
import * as runs from "./runs";
import * as schedules from "./schedules";

const { whoami, ...accessOps } = access;

/** The operations of several files by export name, the order a single module namespace lists them in. */
function byExportName<T extends Record<string, unknown>>(merged: T): T {
  // Sorting reorders the same keys, so the object keeps its type.
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T;
}

// The order of every listing (OpenAPI paths, MCP tools, CLI help, docs/cli.md) stays the one from before
// identity, generations and groups had files of their own.
export const ops = {
  ...byExportName({ ...projects, whoami }),
  ...environments,
  ...byExportName({ ...features, ...generations }),
  ...automations,
  ...byExportName({ ...runs, ...groups }),
  ...accessOps,
  ...runners,
  applyDocuments: apply.applyDocuments,
  testDocuments: apply.testDocuments,
  exportHurl: exports.exportHurl,
  exportPlaywright: exports.exportPlaywright,
  importCurl: imports.importCurl,
  importPostman: imports.importPostman,
  importHar: imports.importHar,
  importOpenapi: imports.importOpenapi,
  ...schedules,
  ...alerts,
  ...history,
  sendAssistantMessage: assistant.sendAssistantMessage,
  confirmAssistantAction: assistant.confirmAssistantAction,
  listAssistantConversations: assistant.listAssistantConversations,
  getAssistantConversation: assistant.getAssistantConversation,
};

export type Ops = typeof ops;
export type OpKey = keyof Ops;

function isOperation(v: unknown): v is Operation {
  return typeof v === "object" && v !== null && "method" in v && "path" in v && "cli" in v;
}

export const operations: Operation[] = Object.values(ops).filter(isOperation);
export const operationsByName: ReadonlyMap<string, Operation> = new Map(operations.map((o) => [o.name, o]));
/** Each operation's key in `ops` (as in `ops.createProject`), for calling it through the core. */
export const keyOfOperation: ReadonlyMap<Operation, OpKey> = new Map(
  (Object.entries(ops) as [OpKey, unknown][]).flatMap(([k, op]) => (isOperation(op) ? [[op, k] as const] : [])),
);

export const API_PREFIX = "/api/v1/ops";

export * from "./define";
export * from "./errors";
export * from "./records";
export * from "./automation-format";
