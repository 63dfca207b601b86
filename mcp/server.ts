// `svc mcp`: the MCP server over stdio, an HTTP client of a running svc (stdout is the protocol; logs go to stderr).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ApiClient, describeWait } from "../src/client/api-client";
import { resolveSettings } from "../src/client/settings";
import { VERSION } from "../src/version";
import { registerPrompts } from "./prompts";
import { registerResources } from "./resources";
import { registerOperationTools, type ToolContext } from "./tools";
import { registerWaitTools } from "./wait-tools";

export function buildMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(
    { name: "svc", version: VERSION },
    {
      instructions:
        "Tools of svc, a test-management and test-automation service. Each tool is one API operation; run_automation starts a run, then wait_for_run follows it to the end. " +
        "Before writing automations or acceptance criteria, read the resources svc://docs/automations (the step format), svc://schema/automation (its JSON Schema) and svc://docs/generation (the Gherkin phrases the generator understands). " +
        "The prompts automate_feature, triage_run and failure_report lay out the usual jobs step by step.",
    },
  );
  registerOperationTools(server, ctx);
  registerWaitTools(server, ctx);
  registerResources(server);
  registerPrompts(server);
  return server;
}

/** Starts serving on stdio; returns an exit code only when it cannot start. */
export async function startMcp(flags: { server?: string; project?: string }): Promise<number> {
  const settings = resolveSettings({ flags });
  if (!settings.key) {
    process.stderr.write(
      settings.withheldKey
        ? `svc mcp: ${settings.withheldKey} (in the MCP client's configuration, beside SVC_SERVER).\n`
        : "svc mcp: no API key. Run `svc login`, or set SVC_API_KEY in the MCP client's configuration for this server.\n",
    );
    return 3;
  }
  const client = new ApiClient({
    server: settings.server.value,
    key: settings.key.value,
    userAgent: `svc-mcp/${VERSION}`,
    // MCP clients commonly give up on a request after 60 s: a longer Retry-After is reported, not waited out.
    maxRetryWaitSeconds: 20,
    onRetry: (n) => process.stderr.write(`svc mcp: HTTP ${n.status || "network error"}; retrying in ${describeWait(n.waitMs)}\n`),
  });
  const server = buildMcpServer({ client, defaultProject: settings.project?.value ?? null });
  await server.connect(new StdioServerTransport());
  process.stderr.write(
    `svc mcp: serving ${settings.server.value} (key from ${settings.key.source})${settings.project ? `, default project ${settings.project.value}` : ""}\n`,
  );
  return 0;
}
