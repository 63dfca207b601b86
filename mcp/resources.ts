// MCP resources: what an assistant needs to write automations and acceptance criteria that work the first
// time — the automation format, the generation guide with its Gherkin phrase library, and the JSON Schema of an
// automation. All embedded in the executable; none needs the server.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import automationsDoc from "../docs/automations.md" with { type: "text" };
import generationDoc from "../docs/generation.md" with { type: "text" };
import { ops } from "../src/manifest/index";

/** The create_automation body as JSON Schema (draft 2020-12), its steps included. */
function automationSchema(): string {
  const schema = z.toJSONSchema(ops.createAutomation.body as z.ZodType, { io: "input", unrepresentable: "any", target: "draft-2020-12" });
  return JSON.stringify({ title: "svc automation (the body of create_automation)", ...schema }, null, 2);
}

export const RESOURCES = [
  {
    name: "automation-format",
    uri: "svc://docs/automations",
    title: "Automation format",
    description: "How http and browser automations are written: steps, assertions, captures, locators, variables, runs and results.",
    mimeType: "text/markdown",
    read: () => automationsDoc,
  },
  {
    name: "generation-guide",
    uri: "svc://docs/generation",
    title: "Test generation and the Gherkin phrase library",
    description: "The generators (gherkin, openapi, crawl, llm) and every step phrase acceptance criteria can use.",
    mimeType: "text/markdown",
    read: () => generationDoc,
  },
  {
    name: "automation-schema",
    uri: "svc://schema/automation",
    title: "Automation JSON Schema",
    description: "JSON Schema of an automation as create_automation and update_automation take it.",
    mimeType: "application/schema+json",
    read: automationSchema,
  },
] as const;

export function registerResources(server: McpServer): void {
  for (const r of RESOURCES) {
    server.registerResource(r.name, r.uri, { title: r.title, description: r.description, mimeType: r.mimeType }, (uri) => ({
      contents: [{ uri: uri.href, mimeType: r.mimeType, text: r.read() }],
    }));
  }
}
