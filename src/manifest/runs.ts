// Operations on runs, groups and group runs.
import { z } from "zod";
import { defineOperation, Description, FilterId, ListQuery, Name, page, PathId, ProjectParams, raw, RunRequest } from "./define";
import { Group, GroupRun, Run, RunStatus } from "./records";

const RunParams = ProjectParams.extend({ runId: PathId.describe("Run id (run_…)") });
const GroupParams = ProjectParams.extend({ groupId: PathId.describe("Group id (grp_…) or exact name") });
const GroupRunParams = ProjectParams.extend({ groupRunId: PathId.describe("Group run id (grn_…)") });
const AutomationIds = z.array(z.string().min(1).max(200)).max(1000);

export const listRuns = defineOperation({
  name: "list_runs",
  method: "GET",
  path: "/projects/{project}/runs",
  summary: "List a project's runs, newest first, filtered by status, automation or group run",
  params: ProjectParams,
  query: ListQuery.extend({
    status: RunStatus.optional(),
    automation: FilterId.optional().describe("Automation id (aut_…) or exact name"),
    group_run: FilterId.optional(),
  }),
  response: page(Run, "RunPage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["runs", "list"] },
});

export const getRun = defineOperation({
  name: "get_run",
  method: "GET",
  path: "/projects/{project}/runs/{runId}",
  summary: "Read one run with its step results (the polling route for runs)",
  params: RunParams,
  response: Run,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
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

export const listGroups = defineOperation({
  name: "list_groups",
  method: "GET",
  path: "/projects/{project}/groups",
  summary: "List a project's groups",
  params: ProjectParams,
  query: ListQuery,
  response: page(Group, "GroupPage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["groups", "list"] },
});

export const createGroup = defineOperation({
  name: "create_group",
  method: "POST",
  path: "/projects/{project}/groups",
  summary: "Create a group: an ordered set of automations run together",
  params: ProjectParams,
  body: z.strictObject({ name: Name, description: Description.optional(), automation_ids: AutomationIds.default([]) }),
  response: Group,
  successStatus: 201,
  errors: ["not_found"],
  cli: { words: ["groups", "create"], args: ["name"] },
});

export const getGroup = defineOperation({
  name: "get_group",
  method: "GET",
  path: "/projects/{project}/groups/{groupId}",
  summary: "Read one group",
  params: GroupParams,
  response: Group,
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["groups", "show"], args: ["groupId"] },
});

export const updateGroup = defineOperation({
  name: "update_group",
  method: "PATCH",
  path: "/projects/{project}/groups/{groupId}",
  summary: "Update a group (automation_ids replaces the ordered list)",
  params: GroupParams,
  body: z.strictObject({ name: Name.optional(), description: Description.optional(), automation_ids: AutomationIds.optional() }),
  response: Group,
  errors: ["not_found", "conflict"],
  hints: { idempotent: true },
  cli: { words: ["groups", "update"], args: ["groupId"] },
});

export const deleteGroup = defineOperation({
  name: "delete_group",
  method: "DELETE",
  path: "/projects/{project}/groups/{groupId}",
  summary: "Delete a group (its automations and past group runs stay)",
  params: GroupParams,
  response: null,
  errors: ["not_found", "conflict"],
  hints: { destructive: true, idempotent: true },
  cli: { words: ["groups", "delete"], args: ["groupId"] },
});

export const runGroup = defineOperation({
  name: "run_group",
  method: "POST",
  path: "/projects/{project}/groups/{groupId}/run",
  summary: "Run every automation of the group under one group run",
  params: GroupParams,
  body: RunRequest,
  response: GroupRun,
  successStatus: 202,
  errors: ["not_found", "conflict", "forbidden"],
  startsWork: true,
  cli: { words: ["groups", "run"], args: ["groupId"] },
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
  cli: { words: ["group-runs", "list"] },
});

export const getGroupRun = defineOperation({
  name: "get_group_run",
  method: "GET",
  path: "/projects/{project}/group-runs/{groupRunId}",
  summary: "Read one group run with its runs (status derived from them)",
  params: GroupRunParams,
  response: GroupRun,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
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
