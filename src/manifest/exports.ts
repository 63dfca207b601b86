// Exporters: an automation written for another runner (a Hurl file, a Playwright test), to take tests elsewhere.
import { z } from "zod";
import { defineOperation, PathId, ProjectParams, raw } from "./define";

export const exportHurl = defineOperation({
  name: "export_hurl",
  method: "GET",
  path: "/projects/{project}/automations/{automationId}/hurl",
  summary: "An http automation as a Hurl file (requests, captures, asserts) that Hurl 7 runs",
  description:
    "Without environment, relative URLs start with {{BASE_URL}} and every {{NAME}} stays a Hurl variable (give them with --variable). " +
    "With environment, its variables are written in (relative URLs become absolute); its secrets stay {{NAME}} variables. Assertions " +
    "Hurl has no counterpart for (a JSON schema) are kept as comments.",
  params: ProjectParams.extend({ automationId: PathId.describe("Automation id (aut_…) or exact name") }),
  query: z.object({
    environment: z.string().min(1).max(200).optional().describe("Environment id or exact name whose variables are written in"),
  }),
  response: raw("text/plain", "The Hurl file"),
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["export", "hurl"], args: ["automationId"], flags: { environment: "env" } },
});

export const exportPlaywright = defineOperation({
  name: "export_playwright",
  method: "GET",
  path: "/projects/{project}/automations/{automationId}/playwright",
  summary: "An automation as a Playwright test (@playwright/test) that `npx playwright test` runs",
  description:
    "Browser steps keep their locators (getByRole, getByText, getByLabel, getByTestId, CSS), http steps go through Playwright's request " +
    "fixture, captures and assertions become expects. Without environment, relative URLs start with process.env.BASE_URL and every " +
    "{{NAME}} is read from the process's environment. With environment, its variables are written in (relative URLs become absolute); " +
    "its secrets are still read from process.env. The browser is the test config's to choose.",
  params: ProjectParams.extend({ automationId: PathId.describe("Automation id (aut_…) or exact name") }),
  query: z.object({
    environment: z.string().min(1).max(200).optional().describe("Environment id or exact name whose variables are written in"),
  }),
  response: raw("text/plain", "The Playwright test (TypeScript)"),
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["export", "playwright"], args: ["automationId"], flags: { environment: "env" } },
});
