// Operations on a feature's test generation (drafts of automations made from its target and criteria).
import { z } from "zod";
import { defineOperation, PathId, ProjectParams, waitQuery } from "./define";
import { Generation, Strategy } from "./records";

const Params = ProjectParams.extend({ feature: PathId.describe("Feature id (fea_…) or exact name") });

export const startGeneration = defineOperation({
  name: "start_generation",
  method: "POST",
  path: "/projects/{project}/features/{feature}/generation",
  summary: "Start generating draft automations for a feature",
  params: Params,
  body: z
    .strictObject({
      strategy: Strategy.default("auto").describe(
        "How to generate: gherkin (from Gherkin acceptance criteria), openapi (from the project's OpenAPI document), crawl (from the target page), llm (from the criteria with the configured model), auto (the first that fits)",
      ),
    })
    .default({ strategy: "auto" }),
  response: Generation,
  successStatus: 202,
  errors: ["not_found", "conflict"],
  startsWork: true,
  cli: { words: ["generate"], args: ["feature"], watch: "generation" },
});

export const getGeneration = defineOperation({
  name: "get_generation",
  method: "GET",
  path: "/projects/{project}/features/{feature}/generation",
  summary: "Read the feature's latest generation (the polling route for generation)",
  params: Params,
  query: waitQuery("generation"),
  response: Generation,
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["generation", "show"], args: ["feature"] },
});

export const cancelGeneration = defineOperation({
  name: "cancel_generation",
  method: "DELETE",
  path: "/projects/{project}/features/{feature}/generation",
  summary: "Cancel the feature's queued or running generation",
  params: Params,
  response: Generation,
  errors: ["not_found", "conflict"],
  hints: { destructive: true },
  cli: { words: ["generation", "cancel"], args: ["feature"] },
});
