// Operations on features, and on all of a feature's automations at once.
import { z } from "zod";
import { pageUrlProblem } from "./browser-urls";
import { defineOperation, Description, FEATURE_RUN_MAX, ListQuery, Name, page, PathId, ProjectParams, RUN_FLAGS, RunRequest } from "./define";
import { Automation, Feature, FeatureTarget, GroupRun } from "./records";

const Params = ProjectParams.extend({ feature: PathId.describe("Feature id (fea_…) or exact name") });
const Criteria = z
  .string()
  .max(200_000)
  .describe(
    "What the feature must do, in words or Gherkin (Given/When/Then with the phrases of svc://docs/generation): what generation makes automations from",
  );
const FeatureName = Name.describe("The feature's name");
const FeatureDescription = Description.describe("What the feature is, for people");

const TARGET =
  'What generation works on: {"kind": "web", "url": page to crawl} or {"kind": "api", "tags", "paths"} (parts of the project\'s OpenAPI document); null: none';

/** A web feature's page is crawled, and opened by the browser steps made from it: never a file:, data:, … URL. */
const Target = FeatureTarget.superRefine((t, ctx) => {
  const problem = t.kind === "web" ? pageUrlProblem(t.url) : null;
  if (problem) ctx.addIssue({ code: "custom", path: ["url"], message: problem });
});

export const listFeatures = defineOperation({
  name: "list_features",
  method: "GET",
  path: "/projects/{project}/features",
  summary: "List a project's features",
  params: ProjectParams,
  query: ListQuery,
  response: page(Feature, "FeaturePage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["features", "list"] },
});

export const createFeature = defineOperation({
  name: "create_feature",
  method: "POST",
  path: "/projects/{project}/features",
  summary: "Describe a feature of the product under test",
  params: ProjectParams,
  body: z.strictObject({
    name: FeatureName,
    description: FeatureDescription.optional(),
    acceptance_criteria: Criteria.optional(),
    target: Target.nullable().optional().describe(TARGET),
  }),
  response: Feature,
  successStatus: 201,
  errors: ["not_found"],
  versioned: true,
  cli: { words: ["features", "create"], args: ["name"] },
});

export const getFeature = defineOperation({
  name: "get_feature",
  method: "GET",
  path: "/projects/{project}/features/{feature}",
  summary: "Read one feature",
  params: Params,
  response: Feature,
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  versioned: true,
  cli: { words: ["features", "show"], args: ["feature"] },
});

export const updateFeature = defineOperation({
  name: "update_feature",
  method: "PATCH",
  path: "/projects/{project}/features/{feature}",
  summary: "Update a feature",
  params: Params,
  body: z.strictObject({
    name: FeatureName.optional(),
    description: FeatureDescription.optional(),
    acceptance_criteria: Criteria.optional(),
    target: Target.nullable().optional().describe(TARGET),
  }),
  response: Feature,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { idempotent: true, destructive: true },
  versioned: true,
  cli: { words: ["features", "update"], args: ["feature"] },
});

export const deleteFeature = defineOperation({
  name: "delete_feature",
  method: "DELETE",
  path: "/projects/{project}/features/{feature}",
  summary: "Delete a feature (its automations stay, unlinked)",
  params: Params,
  response: null,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["features", "delete"], args: ["feature"] },
});

export const activateFeatureDrafts = defineOperation({
  name: "activate_feature_drafts",
  method: "POST",
  path: "/projects/{project}/features/{feature}/activate",
  summary: "Activate every draft automation of the feature (a fresh batch of generated drafts) at once",
  params: Params,
  response: z
    .object({ feature_id: z.string(), activated: z.array(Automation).describe("The drafts made active, oldest first; empty when there were none") })
    .meta({ id: "FeatureActivation" }),
  errors: ["not_found", "conflict"],
  hints: { idempotent: true },
  cli: { words: ["features", "activate"], args: ["feature"] },
});

export const runFeature = defineOperation({
  name: "run_feature",
  method: "POST",
  path: "/projects/{project}/features/{feature}/runs",
  summary: "Run every automation of the feature that can run (not disabled) under one group run, oldest first",
  description: `Answers like run_group: a group run (group_id null, group_name "feature: <name>") followed through get_group_run. At most ${FEATURE_RUN_MAX} automations.`,
  params: Params,
  body: RunRequest,
  response: GroupRun,
  successStatus: 202,
  errors: ["not_found", "conflict", "forbidden"],
  startsWork: true,
  cli: { words: ["features", "run"], args: ["feature"], flags: RUN_FLAGS, watch: "group_run" },
});
