// Runners on other machines (`svc runner`): a workspace's owners and admins create, list and revoke their tokens.
import { z } from "zod";
import { defineOperation, ListQuery, Name, page, PathId, RunnerLabel } from "./define";
import { Runner } from "./records";

const Params = z.object({ runnerId: PathId.describe("Runner id (rnr_…) or exact name (a name several runners share is a 409 listing their ids)") });

export const listRunners = defineOperation({
  name: "list_runners",
  method: "GET",
  path: "/runners",
  summary: "List the runners that may run this workspace's runs: its own and the server-wide ones (owners and admins)",
  query: ListQuery,
  response: page(Runner, "RunnerPage"),
  errors: ["forbidden"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["runners", "list"] },
});

export const createRunner = defineOperation({
  name: "create_runner",
  method: "POST",
  path: "/runners",
  summary: "Create a runner token for this workspace (owners and admins); the token is shown once",
  description:
    "A runner started with the token (`SVC_RUNNER_TOKEN=… svc runner --server URL`) only ever claims this workspace's runs, and so only receives this workspace's secrets. Only the token's hash is stored.",
  body: z.strictObject({
    name: Name.describe("The runner's name, shown in the runners list (e.g. eu-runner-1)"),
    labels: z
      .array(RunnerLabel)
      .max(20)
      .default([])
      .describe("Labels the runner offers: environments requiring runner_labels run only on runners having them all"),
  }),
  response: Runner.extend({ token: z.string().describe("The runner token (svcr_…), shown this once and never again") }).meta({ id: "CreatedRunner" }),
  successStatus: 201,
  errors: ["forbidden"],
  cli: { words: ["runners", "create"], args: ["name"] },
});

export const getRunner = defineOperation({
  name: "get_runner",
  method: "GET",
  path: "/runners/{runnerId}",
  summary: "Read one runner (owners and admins)",
  params: Params,
  response: Runner,
  errors: ["not_found", "forbidden", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["runners", "show"], args: ["runnerId"] },
});

export const revokeRunner = defineOperation({
  name: "revoke_runner",
  method: "DELETE",
  path: "/runners/{runnerId}",
  summary: "Revoke a workspace runner's token (owners and admins): it stops claiming at once; runs it holds end when their lease expires",
  description: "Server-wide runners are revoked by the server's operator only (`svc admin revoke-runner`): 403 here.",
  params: Params,
  response: null,
  errors: ["not_found", "forbidden", "conflict"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["runners", "revoke"], args: ["runnerId"] },
  budgetExempt: true,
});
