// Exporters: an automation written for another runner.
import type { ops } from "../../manifest";
import type { HttpStep } from "../../manifest/automation-format";
import { invalid } from "../../manifest/errors";
import type { Handler } from "../handler";
import { StringMap } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { resolveAutomation } from "../scope";
import { findEnvironment } from "../environments/operations";
import { toHurl } from "./hurl";

type O = typeof ops;

export const exportHurl: Handler<O["exportHurl"]> = async (ctx, { params, query }) => {
  const { project, automation } = await resolveAutomation(ctx, params.project, params.automationId);
  if (automation.kind !== "http")
    throw invalid("only http automations can be exported to Hurl", [{ path: "automationId", message: `a ${automation.kind} automation` }]);
  let variables: Record<string, string> = {};
  if (query.environment !== undefined) {
    const env = await findEnvironment(ctx, project.id, query.environment);
    if (!env) throw invalid(`environment "${query.environment}" does not exist in this project`, [{ path: "environment", message: "unknown environment" }]);
    variables = readJsonColumn(StringMap, env.variables, `variables of environment ${env.id}`);
  }
  const steps = JSON.parse(automation.steps) as HttpStep[];
  const text = toHurl({ name: automation.name, steps }, { baseUrl: variables.BASE_URL ?? "{{BASE_URL}}", variables });
  return {
    body: text,
    contentType: "text/plain; charset=utf-8",
    filename: `${automation.name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 100) || automation.id}.hurl`,
  };
};
