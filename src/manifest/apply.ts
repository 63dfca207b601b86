// Tests as code: make a project match a folder of documents (automations, groups, environments).
import { z } from "zod";
import {
  defineOperation,
  NO_CONTROL_CHARACTERS,
  Name,
  OneRunSecrets,
  ProjectParams,
  RUN_FLAGS,
  RunMetadata,
  RunVariables,
  WITHOUT_CONTROL_CHARACTERS,
} from "./define";
import { GroupRun } from "./records";

export const ApplyDocument = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(1000)
    .regex(WITHOUT_CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS)
    .describe("The file's path relative to the applied folder (its identity unless it has a `key:`)"),
  text: z
    .string()
    .max(256 * 1024)
    .describe("The file's text: YAML or JSON (at most 256 KiB, nested at most 64 levels)"),
});

export const ApplyChange = z
  .object({
    op: z.enum(["create", "update", "delete"]),
    type: z.enum(["automation", "group", "environment", "schedule", "alert_channel"]),
    key: z.string(),
    name: z.string(),
    id: z.string().nullable().describe("The record's id (null for a create in a dry run)"),
    fields: z.array(z.string()).describe("For an update, the fields that change"),
  })
  .meta({ id: "ApplyChange" });

export const ApplyResult = z
  .object({
    dry_run: z.boolean(),
    changes: z.array(ApplyChange),
    summary: z.string().describe('"no changes", or the counts of creates, updates and deletes'),
  })
  .meta({ id: "ApplyResult" });

export const applyDocuments = defineOperation({
  name: "apply",
  method: "POST",
  path: "/projects/{project}/apply",
  summary: "Make the project match a folder of documents (automations, groups, environments, schedules, alert channels), in one transaction",
  description:
    "Each document is identified by its `key:` or else its path. Automations are documents with `kind: http|browser` (the form create_automation takes); groups, environments, schedules and alert channels have `type: group` / `environment` / `schedule` / `alert_channel`. Records it creates carry source `applied` and their key; with prune, applied records whose key no document has are deleted. A second apply of the same documents changes nothing.",
  params: ProjectParams,
  body: z.strictObject({
    documents: z
      .array(ApplyDocument)
      .max(2000)
      .describe("The folder's documents: each file's path relative to the folder and its text (an automation, group, environment, schedule or alert channel)"),
    dry_run: z.boolean().default(false).describe("Only answer the plan"),
    prune: z.boolean().default(false).describe("Delete applied records whose key no document has"),
    environment: z.string().min(1).max(200).optional().describe("Default environment (name) of automations whose document names none"),
    secrets: z
      .record(z.string().max(200), z.string().max(100_000))
      .default({})
      .describe(
        "Values of the machine environment variables that documents name for their secrets (environment secrets, alert channels' secret_from and url_from)",
      ),
  }),
  response: ApplyResult,
  errors: ["not_found", "forbidden", "conflict"],
  startsWork: true,
  cli: { words: ["apply"], summary: "Make the project match a folder: svc apply DIR [--dry-run] [--prune]" },
});

export const testDocuments = defineOperation({
  name: "test_documents",
  method: "POST",
  path: "/projects/{project}/test-runs",
  summary: "Run a folder's automations without saving them: one temporary group run (trigger test) of the documents' automations",
  description:
    "Takes the same documents as apply and checks them the same way (a problem names its file and line), then runs every automation document " +
    "(disabled ones excepted) under one group run with trigger `test`. Nothing is saved: no automation is created or changed, the runs " +
    "belong to no automation (their automation_id starts with tst_), change no automation's health, history or alerts, and are pruned " +
    "by retention like other runs. An automation's `environment:` names an environment of the project. Answers 202 with the group run and its runs.",
  params: ProjectParams,
  body: z.strictObject({
    documents: z
      .array(ApplyDocument)
      .min(1)
      .max(2000)
      .describe("The folder's documents, as for apply: each file's path relative to the folder and its text; its automations are run"),
    name: Name.optional().describe('The group run\'s name (default "test")'),
    environment: z.string().min(1).max(200).optional().describe("Environment name or id every run uses (default: each automation's own)"),
    variables: RunVariables.optional(),
    secrets: OneRunSecrets.optional(),
    metadata: RunMetadata.optional(),
  }),
  response: GroupRun,
  successStatus: 202,
  errors: ["not_found", "forbidden", "conflict"],
  startsWork: true,
  cli: {
    words: ["test"],
    flags: RUN_FLAGS,
    watch: "group_run",
    summary: "Run a folder's automations without saving them: svc test DIR [--junit FILE] [--env E]",
  },
});
