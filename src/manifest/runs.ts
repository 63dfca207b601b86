// Operations on runs and group runs.
import { z } from "zod";
import { defineOperation, FilterId, ListQuery, page, PathId, ProjectParams, raw, waitQuery } from "./define";
import { GroupRun, Run, RunStatus } from "./records";

const RunParams = ProjectParams.extend({ runId: PathId.describe("Run id (run_…)") });
const GroupRunParams = ProjectParams.extend({ groupRunId: PathId.describe("Group run id (grn_…)") });

export const listRuns = defineOperation({
  name: "list_runs",
  method: "GET",
  path: "/projects/{project}/runs",
  summary: "List a project's runs, newest first, filtered by status, automation or group run",
  params: ProjectParams,
  query: ListQuery.extend({
    status: RunStatus.optional().describe("Only runs with this status"),
    automation: FilterId.optional().describe("Automation id (aut_…) or exact name"),
    group_run: FilterId.optional().describe("Only the runs of this group run (grun_…)"),
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
  params: RunParams,
  response: Run,
  errors: ["not_found", "conflict"],
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
  summary: "List a project's group runs, newest first",
  params: ProjectParams,
  query: ListQuery.extend({ group: FilterId.optional().describe("Group id (grp_…) or exact name") }),
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
