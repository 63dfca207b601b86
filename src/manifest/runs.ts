// Operations on runs and group runs.
import { z } from "zod";
import {
  defineOperation,
  FEATURE_RUN_MAX,
  FilterId,
  ListQuery,
  MetadataKey,
  OneRunSecrets,
  page,
  PathId,
  ProjectParams,
  RUN_FLAGS,
  RunMetadata,
  RunVariables,
  raw,
  waitQuery,
} from "./define";
import { GroupRun, Run, RunStatus } from "./records";

/** `?metadata.branch=main&metadata.pr=12`: runs whose metadata has every one of these exactly. */
const MetadataFilter = z
  .record(MetadataKey, z.string().max(1000))
  .optional()
  .describe("Metadata to match exactly, as metadata.KEY=VALUE (repeatable with other keys; all must match)");
const Selector = z.array(z.string().trim().min(1).max(200)).max(FEATURE_RUN_MAX);

const RunParams = ProjectParams.extend({ runId: PathId.describe("Run id (run_…)") });
const GroupRunParams = ProjectParams.extend({ groupRunId: PathId.describe("Group run id (grn_…)") });

export const listRuns = defineOperation({
  name: "list_runs",
  method: "GET",
  path: "/projects/{project}/runs",
  summary: "List a project's runs, newest first, filtered by status, automation (id or exact name), group run, runner or metadata",
  params: ProjectParams,
  query: ListQuery.extend({
    status: RunStatus.optional().describe("Only runs with this status"),
    automation: FilterId.optional().describe("Automation id (aut_…) or exact name"),
    group_run: FilterId.optional().describe("Only the runs of this group run (grn_…)"),
    runner: FilterId.optional().describe("Only the runs this runner (svc runner) executes or executed: runner id (rnr_…) or exact name"),
    metadata: MetadataFilter,
  }),
  response: page(Run, "RunPage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["runs", "list"] },
});

export const getRun = defineOperation({
  name: "get_run",
  method: "GET",
  path: "/projects/{project}/runs/{runId}",
  summary: "Read one run with its step results (the polling route for runs)",
  params: RunParams,
  query: waitQuery("run"),
  response: Run,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["runs", "show"], args: ["runId"] },
});

export const cancelRun = defineOperation({
  name: "cancel_run",
  method: "POST",
  path: "/projects/{project}/runs/{runId}/cancel",
  summary: "Cancel a queued or running run",
  description: "In a protected environment only owners and admins may cancel runs, as only they may start them (403).",
  params: RunParams,
  response: Run,
  errors: ["not_found", "conflict", "forbidden"],
  hints: { destructive: true },
  cli: { words: ["runs", "cancel"], args: ["runId"] },
});

export const getRunJunit = defineOperation({
  name: "get_run_junit",
  method: "GET",
  path: "/projects/{project}/runs/{runId}/junit",
  summary: "The run as JUnit XML",
  params: RunParams,
  response: raw("application/xml", "JUnit XML"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["runs", "junit"], args: ["runId"] },
});

export const getRunArtifact = defineOperation({
  name: "get_run_artifact",
  method: "GET",
  path: "/projects/{project}/runs/{runId}/artifacts/{name}",
  summary: "One artifact of a run (a screenshot or other file), with its own content type",
  params: RunParams.extend({ name: z.string().min(1).max(200) }),
  response: raw("application/octet-stream", "The artifact's bytes"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["runs", "artifact"], args: ["runId", "name"] },
});

export const listGroupRuns = defineOperation({
  name: "list_group_runs",
  method: "GET",
  path: "/projects/{project}/group-runs",
  summary: "List a project's group runs, newest first, filtered by group (id or exact name) or metadata",
  params: ProjectParams,
  query: ListQuery.extend({ group: FilterId.optional().describe("Group id (grp_…) or exact name"), metadata: MetadataFilter }),
  response: page(GroupRun, "GroupRunPage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["group-runs", "list"] },
});

export const getGroupRun = defineOperation({
  name: "get_group_run",
  method: "GET",
  path: "/projects/{project}/group-runs/{groupRunId}",
  summary: "Read one group run with its runs (status derived from them)",
  params: GroupRunParams,
  query: waitQuery("group run"),
  response: GroupRun,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["group-runs", "show"], args: ["groupRunId"] },
});

export const cancelGroupRun = defineOperation({
  name: "cancel_group_run",
  method: "POST",
  path: "/projects/{project}/group-runs/{groupRunId}/cancel",
  summary: "Cancel a group run: each of its queued or running runs, and the runs a sequential one has yet to queue",
  description:
    "Its queued and running runs end cancelled at once (running ones are stopped by whatever executes them) and a sequential group run queues " +
    "nothing more: the automations it had yet to run are recorded as cancelled runs that did not run. The group run ends cancelled; one that " +
    "has already ended is a 409. Answers the group run with its runs, as get_group_run does. In a protected environment only owners and " +
    "admins may cancel (403).",
  params: GroupRunParams,
  response: GroupRun,
  errors: ["not_found", "conflict", "forbidden"],
  hints: { destructive: true },
  cli: { words: ["group-runs", "cancel"], args: ["groupRunId"] },
});

export const getGroupRunJunit = defineOperation({
  name: "get_group_run_junit",
  method: "GET",
  path: "/projects/{project}/group-runs/{groupRunId}/junit",
  summary: "The group run as JUnit XML (one testcase per automation)",
  params: GroupRunParams,
  response: raw("application/xml", "JUnit XML"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["group-runs", "junit"], args: ["groupRunId"] },
});

export const runSelection = defineOperation({
  name: "run_selection",
  method: "POST",
  path: "/projects/{project}/runs",
  summary: "Run a selection of automations (by id or name, tag, feature) under one group run, or re-run a group run's failed runs",
  description:
    "The criteria given narrow each other (automations AND tags AND feature); tags match any of those listed. Tags and a feature select active " +
    "automations; automations named in `automations` run unless disabled. With from_group_run, that group run's automations run again " +
    "(only_failed: those that did not pass), with its environment, variables and metadata unless given. Answers 202 with the group run and its runs.",
  params: ProjectParams,
  body: z
    .strictObject({
      automations: Selector.optional().describe("Automation ids or exact names"),
      tags: z.array(z.string().trim().min(1).max(100)).max(50).optional().describe("Automations tagged with any of these (ignoring case)"),
      feature: z.string().min(1).max(200).optional().describe("The automations of this feature (id or exact name)"),
      from_group_run: z.string().min(1).max(200).optional().describe("Re-run this group run's automations (grn_…)"),
      only_failed: z.boolean().optional().describe("With from_group_run: only those whose run did not pass"),
      environment: z.string().min(1).max(200).optional().describe("Environment name or id (default: each automation's own)"),
      variables: RunVariables.optional(),
      secrets: OneRunSecrets.optional(),
      metadata: RunMetadata.optional(),
    })
    .default({}),
  response: GroupRun,
  successStatus: 202,
  errors: ["not_found", "conflict", "forbidden"],
  startsWork: true,
  cli: {
    words: ["run"],
    flags: { ...RUN_FLAGS, tags: "tag", automations: "automation" },
    watch: "group_run",
    summary:
      "Run automations selected by --tag, --automation (id or name) and --feature under one group run; --from-group-run ID --only-failed re-runs failures",
  },
});
