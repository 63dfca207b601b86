// Exporters: an automation written for another runner.
import type { ops } from "../../manifest";
import type { HttpStep, Step } from "../../manifest/automation-format";
import { invalid } from "../../manifest/errors";
import type { Handler } from "../handler";
import { StringMap } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { resolveAutomation } from "../scope";
import { findEnvironment } from "../environments/operations";
import { toHurl } from "./hurl";
import { toPlaywright } from "./playwright";

type O = typeof ops;

/** The variables of the environment named in `environment` (none without one): what an export writes in. */
async function writtenVariables(
  ctx: Parameters<Handler<O["exportHurl"]>>[0],
  projectId: string,
  environment: string | undefined,
): Promise<Record<string, string>> {
  if (environment === undefined) return {};
  const env = await findEnvironment(ctx, projectId, environment);
  if (!env) throw invalid(`environment "${environment}" does not exist in this project`, [{ path: "environment", message: "unknown environment" }]);
  return readJsonColumn(StringMap, env.variables, `variables of environment ${env.id}`);
}

const fileName = (name: string, id: string, extension: string) => `${name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 100) || id}${extension}`;

export const exportHurl: Handler<O["exportHurl"]> = async (ctx, { params, query }) => {
  const { project, automation } = await resolveAutomation(ctx, params.project, params.automationId);
  if (automation.kind !== "http")
    throw invalid("only http automations can be exported to Hurl", [{ path: "automationId", message: `a ${automation.kind} automation` }]);
  const variables = await writtenVariables(ctx, project.id, query.environment);
  const steps = JSON.parse(automation.steps) as HttpStep[];
  const text = toHurl({ name: automation.name, steps }, { baseUrl: variables.BASE_URL ?? "{{BASE_URL}}", variables });
  return {
    body: text,
    contentType: "text/plain; charset=utf-8",
    filename: fileName(automation.name, automation.id, ".hurl"),
  };
};

export const exportPlaywright: Handler<O["exportPlaywright"]> = async (ctx, { params, query }) => {
  const { project, automation } = await resolveAutomation(ctx, params.project, params.automationId);
  const variables = await writtenVariables(ctx, project.id, query.environment);
  const steps = JSON.parse(automation.steps) as Step[];
  return {
    body: toPlaywright({ name: automation.name, steps }, { variables }),
    contentType: "text/plain; charset=utf-8",
    filename: fileName(automation.name, automation.id, ".spec.ts"),
  };
};
