// The MCP tool list as a client sees it (names, descriptions, input schemas, annotations): a reviewed snapshot,
// so a tool cannot change unreviewed. Accept a reviewed change with `bun test --update-snapshots`.
import { expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { clientExecutor } from "../mcp/executor";
import { buildMcpServer } from "../mcp/server";
import { parseSelection } from "../mcp/toolsets";
import { ApiClient } from "../src/client/api-client";

async function listTools(defaultProject: string | null) {
  // Listing tools sends no request: the client only needs to exist.
  const api = new ApiClient({ server: "http://127.0.0.1:9", key: "svc_unused", userAgent: "svc-mcp/test" });
  const server = buildMcpServer({ executor: clientExecutor(api), defaultProject, selection: parseSelection("all", false) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "contract-test", version: "0" });
  await client.connect(clientSide);
  const { tools } = await client.listTools();
  await client.close();
  await server.close();
  return tools
    .map((t) => ({ name: t.name, description: t.description, annotations: t.annotations, inputSchema: t.inputSchema, outputSchema: t.outputSchema }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

test("the MCP tool list matches its reviewed snapshot", async () => {
  expect(JSON.stringify(await listTools(null), null, 2)).toMatchSnapshot();
});

test("with a default project, `project` becomes optional in the snapshot too", async () => {
  expect(JSON.stringify(await listTools("shop"), null, 2)).toMatchSnapshot();
});
