// A request body each operation accepts, for tests where something else (an id, a key) must be the only fault.
export const VALID_BODIES: Record<string, unknown> = {
  create_environment: { name: "other" },
  create_feature: { name: "other" },
  create_automation: { name: "other", kind: "http", steps: [{ request: { url: "/x" } }] },
  create_group: { name: "other" },
  create_project: { name: "other" },
  update_member: { role: "member" },
  add_member: { email: "n@acme.test" },
  create_schedule: { name: "other", target: { tags: ["x"] }, interval_seconds: 3600 },
  create_alert_channel: { name: "other", kind: "slack", url: "https://hooks.example.test/x" },
  apply: { documents: [{ path: "other.yaml", text: "name: other\nkind: http\nsteps:\n  - request: { url: /x }\n" }], dry_run: true },
  test_documents: { documents: [{ path: "other.yaml", text: "name: other\nkind: http\nsteps:\n  - request: { url: /x }\n" }] },
  import_curl: { command: "curl https://shop.example.test/items" },
  send_assistant_message: { text: "hello", conversation_id: "asst_elsewhere" },
  import_har: { har: { log: { entries: [{ request: { method: "GET", url: "https://shop.example.test/items" }, response: { status: 200 } }] } } },
  import_openapi: {
    document: { openapi: "3.0.3", info: { title: "fuzz api", version: "1" }, paths: { "/items": { get: { responses: { "200": { description: "ok" } } } } } },
  },
  import_postman: {
    collection: { info: { name: "fuzz collection" }, item: [{ name: "one", request: { method: "GET", url: "https://shop.example.test/items" } }] },
  },
};
