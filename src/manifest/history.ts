// History of an automation or a project over the last days, from daily roll-ups that outlive pruned runs.
import { z } from "zod";
import { defineOperation, PathId, ProjectParams } from "./define";
import { Dashboard, History } from "./records";

const HistoryQuery = z.object({ days: z.coerce.number().int().min(1).max(365).default(30).describe("How many days back, today included (1–365)") });

export const getAutomationHistory = defineOperation({
  name: "get_automation_history",
  method: "GET",
  path: "/projects/{project}/automations/{automationId}/history",
  summary: "An automation's runs over the last days: pass rate, durations and one entry per day (kept when old runs are pruned)",
  params: ProjectParams.extend({ automationId: PathId.describe("Automation id (aut_…) or exact name") }),
  query: HistoryQuery,
  response: History,
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["automations", "history"], args: ["automationId"] },
});

export const getProjectHistory = defineOperation({
  name: "get_project_history",
  method: "GET",
  path: "/projects/{project}/history",
  summary: "A project's runs over the last days: pass rate, durations and one entry per day (the trend)",
  params: ProjectParams,
  query: HistoryQuery,
  response: History,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["projects", "history"], args: ["project"] },
});

export const getDashboard = defineOperation({
  name: "get_dashboard",
  method: "GET",
  path: "/dashboard",
  summary:
    "The workspace at a glance in one read: per project, how many automations pass, are flaky or fail by their latest runs, what is queued and running, and the latest runs",
  response: Dashboard,
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["dashboard"] },
});
