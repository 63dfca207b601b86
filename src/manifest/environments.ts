// Operations on a project's environments (variables, and write-only secrets).
import { z } from "zod";
import { defineOperation, ListQuery, Name, page, PathId, ProjectParams, RunnerLabel, SecretValue, VarName } from "./define";
import { Environment } from "./records";

const Variables = z
  .record(VarName, z.string().max(10_000))
  .describe("Variables by name, used in steps as {{NAME}} (BASE_URL makes relative URLs absolute); given, they replace all of the environment's variables");

/** A host name as a URL carries it (lowercase ASCII, punycode for other names) or an IP address; no scheme, port or path. */
function isHostName(h: string): boolean {
  if (!/^[A-Za-z0-9.\-[\]:]+$/.test(h)) return false;
  try {
    return new URL(`http://${h}/`).hostname === h.toLowerCase();
  } catch {
    return false;
  }
}
const AllowedHosts = z
  .array(z.string().max(253).refine(isHostName, "a host name like api.example.com or an IP address, without scheme, port or path"))
  .min(1)
  .max(100)
  .describe("Protected environments only: the hosts its secrets may be sent to (default, when null: the host of its BASE_URL)");
const Protected = z
  .boolean()
  .describe("Only owners and admins may change a protected environment or start runs in it; its secrets go only to its allowed hosts");
const RunnerLabels = z
  .array(RunnerLabel)
  .max(20)
  .describe("Only runners having all these labels run this environment's runs (the server's own engine has none, so never takes them); [] for any runner");
const Params = ProjectParams.extend({ environmentId: PathId.describe("Environment id (env_…) or name") });

export const listEnvironments = defineOperation({
  name: "list_environments",
  method: "GET",
  path: "/projects/{project}/environments",
  summary: "List a project's environments",
  params: ProjectParams,
  query: ListQuery,
  response: page(Environment, "EnvironmentPage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["environments", "list"] },
});

export const createEnvironment = defineOperation({
  name: "create_environment",
  method: "POST",
  path: "/projects/{project}/environments",
  summary: "Create an environment with variables and secrets",
  params: ProjectParams,
  body: z.strictObject({
    name: Name.describe("The environment's name, e.g. staging"),
    variables: Variables.optional(),
    secrets: z.record(VarName, SecretValue).optional().describe("Secrets by name, used as {{NAME}} and masked in results; write-only"),
    protected: Protected.optional(),
    allowed_hosts: AllowedHosts.nullable()
      .optional()
      .describe("Protected environments only: the hosts its secrets may be sent to; null: the host of its BASE_URL"),
    runner_labels: RunnerLabels.optional(),
  }),
  response: Environment,
  successStatus: 201,
  errors: ["not_found", "conflict", "forbidden"],
  versioned: true,
  cli: { words: ["environments", "create"], args: ["name"] },
});

export const getEnvironment = defineOperation({
  name: "get_environment",
  method: "GET",
  path: "/projects/{project}/environments/{environmentId}",
  summary: "Read one environment (secret values are never returned)",
  params: Params,
  response: Environment,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  versioned: true,
  cli: { words: ["environments", "show"], args: ["environmentId"] },
});

export const updateEnvironment = defineOperation({
  name: "update_environment",
  method: "PATCH",
  path: "/projects/{project}/environments/{environmentId}",
  summary: "Update an environment: variables replace all, variables_merge changes only the names it gives; secrets merge (a null value removes one)",
  params: Params,
  body: z.strictObject({
    name: Name.optional().describe("The environment's name, e.g. staging"),
    variables: Variables.optional().describe("Replaces every variable (names left out are removed)"),
    variables_merge: z
      .record(VarName, z.string().max(10_000).nullable())
      .optional()
      .describe("Sets only the variables it names, keeping the others; a null value removes one (not with variables)"),
    secrets: z
      .record(VarName, SecretValue.nullable())
      .optional()
      .describe("Secrets to set, by name (null deletes one); secrets not named are kept. Write-only"),
    protected: Protected.optional(),
    allowed_hosts: AllowedHosts.nullable()
      .optional()
      .describe("Protected environments only: the hosts its secrets may be sent to; null: the host of its BASE_URL"),
    runner_labels: RunnerLabels.optional(),
  }),
  response: Environment,
  errors: ["not_found", "conflict", "forbidden", "precondition_failed"],
  hints: { idempotent: true, destructive: true },
  versioned: true,
  cli: { words: ["environments", "update"], args: ["environmentId"] },
});

export const deleteEnvironment = defineOperation({
  name: "delete_environment",
  method: "DELETE",
  path: "/projects/{project}/environments/{environmentId}",
  summary: "Delete an environment",
  params: Params,
  response: null,
  errors: ["not_found", "forbidden", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["environments", "delete"], args: ["environmentId"] },
});
