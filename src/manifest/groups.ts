// Operations on groups: ordered sets of automations run together (their group runs are in runs.ts).
import { z } from "zod";
import { defineOperation, Description, ListQuery, Name, page, PathId, ProjectParams, RUN_FLAGS, RunRequest } from "./define";
import { Group, GroupMode, GroupRun } from "./records";

const GroupParams = ProjectParams.extend({ groupId: PathId.describe("Group id (grp_…) or exact name") });
const AutomationIds = z
  .array(z.string().min(1).max(200))
  .max(1000)
  .describe("The automations in the group, by id (aut_…) or exact name (kept as ids); given, they replace its whole list");
const GroupName = Name.describe("The group's name");
const GroupDescription = Description.describe("What the group is for, for people");
const StopOnFailure = z.boolean().describe("Sequential groups: stop at the first run that does not pass (default: false, run them all)");

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
  cached: true,
  cli: { words: ["groups", "list"] },
});

export const createGroup = defineOperation({
  name: "create_group",
  method: "POST",
  path: "/projects/{project}/groups",
  summary: "Create a group: an ordered set of automations run together (its name unique in the project)",
  params: ProjectParams,
  body: z.strictObject({
    name: GroupName,
    description: GroupDescription.optional(),
    automation_ids: AutomationIds.default([]),
    mode: GroupMode.optional().describe("Default: parallel"),
    stop_on_failure: StopOnFailure.optional(),
  }),
  response: Group,
  successStatus: 201,
  errors: ["not_found", "conflict"],
  versioned: true,
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
  cached: true,
  versioned: true,
  cli: { words: ["groups", "show"], args: ["groupId"] },
});

export const updateGroup = defineOperation({
  name: "update_group",
  method: "PATCH",
  path: "/projects/{project}/groups/{groupId}",
  summary: "Update a group (automation_ids replaces the ordered list)",
  params: GroupParams,
  body: z.strictObject({
    name: GroupName.optional(),
    description: GroupDescription.optional(),
    automation_ids: AutomationIds.optional(),
    mode: GroupMode.optional(),
    stop_on_failure: StopOnFailure.optional(),
  }),
  response: Group,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { idempotent: true, destructive: true },
  versioned: true,
  cli: { words: ["groups", "update"], args: ["groupId"] },
});

export const deleteGroup = defineOperation({
  name: "delete_group",
  method: "DELETE",
  path: "/projects/{project}/groups/{groupId}",
  summary: "Delete a group (its automations and past group runs stay)",
  params: GroupParams,
  response: null,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["groups", "delete"], args: ["groupId"] },
});

export const runGroup = defineOperation({
  name: "run_group",
  method: "POST",
  path: "/projects/{project}/groups/{groupId}/run",
  summary: "Run every automation of the group under one group run (in order, one at a time, when the group is sequential)",
  params: GroupParams,
  body: RunRequest,
  response: GroupRun,
  successStatus: 202,
  errors: ["not_found", "conflict", "forbidden"],
  startsWork: true,
  cli: { words: ["groups", "run"], args: ["groupId"], flags: RUN_FLAGS, watch: "group_run" },
});
