// Every operation of the manifest over real HTTP, in the order a team would use them; the OpenAPI document
// is validated by a real parser and covers each operation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { API_PREFIX, operations } from "../src/manifest";
import { WebClient } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const exercised = new Set<string>();

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
});
afterAll(() => s.stop());

/** Calls an operation by name, checks it answers its declared success status, and returns the body. */
async function op(name: string, params: Record<string, string>, body?: unknown, key?: string, query = "") {
  const o = operations.find((x) => x.name === name);
  if (!o) throw new Error(`no operation ${name}`);
  const path = o.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(params[p] ?? ""));
  const res = await s.call(o.method, path + query, body, key);
  const text = await res.text();
  if (res.status !== o.successStatus) throw new Error(`${name}: expected ${o.successStatus}, got ${res.status}: ${text}`);
  exercised.add(name);
  if (o.response === null) return null;
  if ("raw" in o.response) return { text, type: res.headers.get("content-type") };
  return JSON.parse(text);
}

describe("every operation works end to end", () => {
  test("the whole walk", async () => {
    const me = await op("whoami", {});
    expect(me.workspace.slug).toBe("acme");
    expect(me.key.prefix).toBe(s.key.slice(0, 12));

    const project = await op("create_project", {}, { name: "Web Shop", description: "the shop" });
    expect(project.slug).toBe("web-shop");
    expect((await op("list_projects", {})).data.map((p: { id: string }) => p.id)).toContain(project.id);
    expect((await op("get_project", { project: project.id })).name).toBe("Web Shop");
    const doc = { openapi: "3.0.3", info: { title: "t", version: "1" }, paths: {} };
    const updated = await op("update_project", { project: "web-shop" }, { description: "changed", openapi: doc });
    expect(updated.has_openapi).toBe(true);
    expect(updated.openapi.openapi).toBe("3.0.3");

    const env = await op(
      "create_environment",
      { project: "web-shop" },
      { name: "staging", variables: { BASE_URL: "http://127.0.0.1:9" }, secrets: { TOKEN: "s3cr3t-value" } },
    );
    expect(env.secret_names).toEqual(["TOKEN"]);
    expect(JSON.stringify(env)).not.toContain("s3cr3t-value");
    expect((await op("list_environments", { project: "web-shop" })).data.length).toBe(1);
    expect((await op("get_environment", { project: "web-shop", environmentId: "staging" })).id).toBe(env.id);
    const env2 = await op("update_environment", { project: "web-shop", environmentId: env.id }, { secrets: { TOKEN: null, OTHER: "other-value" } });
    expect(env2.secret_names).toEqual(["OTHER"]);

    const feature = await op(
      "create_feature",
      { project: "web-shop" },
      {
        name: "Login",
        acceptance_criteria: 'Scenario: ok\n  Given I open "/login"',
        target: { kind: "web", url: "http://127.0.0.1:9/login" },
      },
    );
    expect(feature.target.kind).toBe("web");
    expect((await op("list_features", { project: "web-shop" })).data[0].id).toBe(feature.id);
    expect((await op("get_feature", { project: "web-shop", feature: feature.id })).name).toBe("Login");
    expect((await op("update_feature", { project: "web-shop", feature: feature.id }, { description: "d" })).description).toBe("d");
    const gen = await op("start_generation", { project: "web-shop", feature: feature.id }, { strategy: "gherkin" });
    expect(gen.id).toStartWith("gen_");
    expect((await op("get_generation", { project: "web-shop", feature: feature.id })).id).toBe(gen.id);
    const cancelOp = operations.find((o) => o.name === "cancel_generation");
    const cancel = await s.call("DELETE", `/projects/web-shop/features/${feature.id}/generation`);
    // The generation engine may already have finished it; both outcomes are legal, a 5xx is not.
    expect([cancelOp?.successStatus, 409]).toContain(cancel.status);
    exercised.add("cancel_generation");

    const steps = [
      { name: "get", request: { method: "GET", url: "/items/1" }, expect: [{ status: 200 }, { json: "$.id", equals: 1 }], capture: { item: "$.name" } },
    ];
    const aut = await op(
      "create_automation",
      { project: "web-shop" },
      { name: "zebra item", kind: "http", steps, feature: feature.id, environment: "staging", tags: ["smoke"], retries: 1 },
    );
    expect(aut.environment_id).toBe(env.id);
    expect(aut.status).toBe("active");
    const browser = await op(
      "create_automation",
      { project: "web-shop" },
      {
        name: "sign in",
        kind: "browser",
        status: "draft",
        steps: [
          { goto: "/login" },
          { fill: { locator: "label=Email", value: "a@b.c" } },
          { click: 'role=button[name="Sign in"]' },
          { expect: { text: "Welcome" } },
          { screenshot: "after" },
        ],
      },
    );
    expect(browser.status).toBe("draft");
    // The generation started above may add drafts of its own; the filter must still hold.
    const list = await op("list_automations", { project: "web-shop" }, undefined, undefined, "?kind=browser");
    expect(list.data.map((a: { id: string }) => a.id)).toContain(browser.id);
    expect(list.data.every((a: { kind: string }) => a.kind === "browser")).toBe(true);
    expect((await op("list_automations", { project: "web-shop" }, undefined, undefined, "?q=ZEBRA")).data.map((a: { id: string }) => a.id)).toEqual([aut.id]);
    expect((await op("get_automation", { project: "web-shop", automationId: aut.id })).steps[0].request.url).toBe("/items/1");
    expect((await op("update_automation", { project: "web-shop", automationId: browser.id }, { status: "active" })).status).toBe("active");
    expect((await op("export_hurl", { project: "web-shop", automationId: aut.id }, undefined, undefined, "?environment=staging")).text).toContain("HTTP");
    expect((await op("export_playwright", { project: "web-shop", automationId: browser.id })).text).toContain("await page.");

    const run = await op("run_automation", { project: "web-shop", automationId: aut.id }, { environment: "staging" });
    expect(run.trigger).toBe("api");
    expect((await op("list_automation_runs", { project: "web-shop", automationId: aut.id })).data[0].id).toBe(run.id);
    expect((await op("list_runs", { project: "web-shop" }, undefined, undefined, `?automation=${aut.id}`)).data[0].id).toBe(run.id);
    expect((await op("get_run", { project: "web-shop", runId: run.id })).id).toBe(run.id);
    const junit = await op("get_run_junit", { project: "web-shop", runId: run.id });
    expect(junit.type).toContain("xml");
    expect(junit.text).toContain("<testsuites");
    const missingArtifact = await s.call("GET", `/projects/web-shop/runs/${run.id}/artifacts/nothing.png`);
    expect(missingArtifact.status).toBe(404);
    exercised.add("get_run_artifact");
    const maybeCancel = await s.call("POST", `/projects/web-shop/runs/${run.id}/cancel`);
    expect([200, 409]).toContain(maybeCancel.status);
    exercised.add("cancel_run");

    const group = await op("create_group", { project: "web-shop" }, { name: "smoke", automation_ids: [browser.id, aut.id] });
    expect(group.automation_ids).toEqual([browser.id, aut.id]);
    expect((await op("list_groups", { project: "web-shop" })).data[0].id).toBe(group.id);
    expect((await op("get_group", { project: "web-shop", groupId: group.id })).name).toBe("smoke");
    expect((await op("update_group", { project: "web-shop", groupId: group.id }, { automation_ids: [aut.id, browser.id] })).automation_ids).toEqual([
      aut.id,
      browser.id,
    ]);
    const gr = await op("run_group", { project: "web-shop", groupId: group.id }, {});
    expect(gr.id).toStartWith("grn_");
    expect(gr.runs.map((r: { automation_id: string }) => r.automation_id)).toEqual([aut.id, browser.id]);
    expect((await op("list_group_runs", { project: "web-shop" })).data[0].id).toBe(gr.id);
    expect((await op("get_group_run", { project: "web-shop", groupRunId: gr.id })).summary.total).toBe(2);
    expect((await op("get_automation_history", { project: "web-shop", automationId: aut.id }, undefined, undefined, "?days=7")).daily).toHaveLength(7);
    expect((await op("get_project_history", { project: "web-shop" })).days).toBe(30);
    expect((await op("get_dashboard", {})).projects.find((p: { slug: string }) => p.slug === "web-shop").automations).toBeGreaterThan(0);
    const gj = await op("get_group_run_junit", { project: "web-shop", groupRunId: gr.id });
    expect(gj.text.match(/<testcase /g)?.length).toBe(2);
    const sel = await op("run_selection", { project: "web-shop" }, { automations: [aut.id], metadata: { branch: "main" } });
    expect(sel.runs.map((r: { automation_id: string }) => r.automation_id)).toEqual([aut.id]);
    // The engine may already have ended it; both outcomes are legal, a 5xx is not.
    const cancelGroup = await s.call("POST", `/projects/web-shop/group-runs/${sel.id}/cancel`);
    expect([200, 409]).toContain(cancelGroup.status);
    exercised.add("cancel_group_run");

    // A feature's automations at once (the generation started above may add drafts of its own).
    expect((await op("activate_feature_drafts", { project: "web-shop", feature: "Login" })).feature_id).toBe(feature.id);
    const fr = await op("run_feature", { project: "web-shop", feature: feature.id }, { environment: "staging" });
    expect(fr.group_id).toBeNull();
    expect(fr.runs.map((r: { automation_id: string }) => r.automation_id)).toContain(aut.id);

    const keys = await op("list_keys", {});
    expect(keys.data.length).toBe(1);
    expect(keys.data[0].prefix).toMatch(/^svc_[0-9A-Za-z]{8}$/);
    expect((await op("get_key", { keyId: keys.data[0].id })).prefix).toBe(keys.data[0].prefix);
    expect(JSON.stringify(keys)).not.toContain(s.key);
    // create_key is session-only: the signed-in owner calls it with the session cookie and CSRF token.
    const owner = new WebClient(s.url);
    expect((await owner.signIn("owner@acme.test", "correct horse battery")).status).toBe(200);
    const minted = await owner.send("POST", `${API_PREFIX}/keys`, { name: "from the web" });
    expect(minted.status).toBe(201);
    expect((await minted.json()).key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
    exercised.add("create_key");

    const added = await op("add_member", {}, { email: "new@acme.test", role: "member" });
    expect(added.setup_url).toContain("/setup-password?token=");
    expect((await op("list_members", {})).data.map((m: { email: string }) => m.email)).toContain("new@acme.test");
    expect((await op("get_member", { userId: added.user_id })).email).toBe("new@acme.test");
    expect((await op("update_member", { userId: added.user_id }, { role: "admin" })).role).toBe("admin");
    await op("remove_member", { userId: added.user_id });

    const second = await s.userWithKey("second@acme.test", "acme", "member");
    await op("revoke_key", { keyId: second.keyId }, undefined, second.key);

    // Someone who already has an account is invited, and accepts or declines.
    for (const [email, answer] of [
      ["joins@globex.test", "accept_invitation"],
      ["stays@globex.test", "decline_invitation"],
    ] as const) {
      const invitee = await s.userWithKey(email, "globex", "owner");
      const inv = await op("add_member", {}, { email, role: "member" });
      expect((await op("list_invitations", {}, undefined, invitee.key)).data[0].id).toBe(inv.invitation_id);
      await op(answer, { invitationId: inv.invitation_id }, undefined, invitee.key);
    }
    // The workspace sees what it has sent, and cancels a mistaken invitation.
    await s.userWithKey("mistaken@globex.test", "globex", "owner");
    const mistaken = await op("add_member", {}, { email: "mistaken@globex.test", role: "admin" });
    expect((await op("list_workspace_invitations", {})).data.map((i: { id: string }) => i.id)).toEqual([mistaken.invitation_id]);
    expect((await op("get_workspace_invitation", { invitationId: mistaken.invitation_id })).email).toBe("mistaken@globex.test");
    await op("cancel_invitation", { invitationId: mistaken.invitation_id });
    expect((await op("list_workspace_invitations", {})).data).toEqual([]);

    // Runners: a token shown once, then listed, read and revoked without it.
    const runner = await op("create_runner", {}, { name: "office-box", labels: ["eu"] });
    expect(runner.token).toMatch(/^svcr_[0-9A-Za-z]{43}$/);
    expect((await op("list_runners", {})).data.map((r: { id: string }) => r.id)).toContain(runner.id);
    expect((await op("get_runner", { runnerId: runner.id })).token).toBeUndefined();
    await op("revoke_runner", { runnerId: runner.id });
    // Schedules and alert channels.
    const sch = await op(
      "create_schedule",
      { project: "web-shop" },
      { name: "nightly", target: { group: group.id }, cron: "0 3 * * *", environment: "staging" },
    );
    expect(sch.next_runs_at).toHaveLength(5);
    expect((await op("list_schedules", { project: "web-shop" })).data.map((x: { id: string }) => x.id)).toEqual([sch.id]);
    expect((await op("get_schedule", { project: "web-shop", scheduleId: "nightly" })).id).toBe(sch.id);
    expect((await op("update_schedule", { project: "web-shop", scheduleId: sch.id }, { interval_seconds: 600 })).cron).toBeNull();
    await op("delete_schedule", { project: "web-shop", scheduleId: sch.id });
    const ch = await op(
      "create_alert_channel",
      { project: "web-shop" },
      { name: "hook", kind: "webhook", url: "http://127.0.0.1:9/hook", secret: "hook-secret-1" },
    );
    expect(ch.has_secret).toBe(true);
    expect((await op("list_alert_channels", { project: "web-shop" })).data.map((x: { id: string }) => x.id)).toEqual([ch.id]);
    expect((await op("get_alert_channel", { project: "web-shop", channelId: "hook" })).id).toBe(ch.id);
    expect((await op("update_alert_channel", { project: "web-shop", channelId: ch.id }, { events: ["failing"] })).events).toEqual(["failing"]);
    const delivery = await op("test_alert_channel", { project: "web-shop", channelId: ch.id });
    expect((await op("list_alert_deliveries", { project: "web-shop", channelId: ch.id })).data.map((d: { delivery_id: string }) => d.delivery_id)).toContain(
      delivery.delivery_id,
    );
    await op("delete_alert_channel", { project: "web-shop", channelId: ch.id });

    // Tests as code: a folder applied (a dry run plans, the apply creates), a cURL command imported.
    const documents = [{ path: "smoke/items.yaml", text: "name: items from a file\nkind: http\nsteps:\n  - request: { url: /items }\n" }];
    const plan = await op("apply", { project: "web-shop" }, { documents, dry_run: true });
    expect(plan.changes.map((c: { op: string }) => c.op)).toEqual(["create"]);
    await op("apply", { project: "web-shop" }, { documents });
    // The same folder tried without saving: a temporary group run of its automations.
    const tried = await op(
      "test_documents",
      { project: "web-shop" },
      { documents: [{ path: "try/items.yaml", text: "name: tried\nkind: http\nsteps:\n  - request: { url: /items }\n" }] },
    );
    expect(tried.runs).toHaveLength(1);
    const imported = await op("import_curl", { project: "web-shop" }, { command: "curl -H 'accept: application/json' https://shop.example.test/items/1" });
    expect(imported.automations).toHaveLength(1);
    const collection = { info: { name: "walk" }, item: [{ name: "walk item", request: { method: "GET", url: "https://shop.example.test/items" } }] };
    expect((await op("import_postman", { project: "web-shop" }, { collection })).automations).toHaveLength(1);
    const har = { log: { entries: [{ request: { method: "GET", url: "https://shop.example.test/items" }, response: { status: 200 } }] } };
    expect((await op("import_har", { project: "web-shop" }, { har })).automations).toHaveLength(1);
    const document = {
      openapi: "3.0.3",
      info: { title: "walk api", version: "1" },
      paths: { "/items": { get: { responses: { "200": { description: "ok" } } } } },
    };
    expect((await op("import_openapi", { project: "web-shop" }, { document, base_url: "https://shop.example.test" })).automations).toHaveLength(1);

    // The assistant (its model and actions: test/assistant.test.ts): without a model, a message answers 409.
    const asked = await s.call("POST", "/assistant/messages", { text: "hello" });
    expect(asked.status).toBe(409);
    exercised.add("send_assistant_message");
    expect((await op("list_assistant_conversations", {})).data).toEqual([]);
    expect((await s.call("GET", "/assistant/conversations/asst_none")).status).toBe(404);
    exercised.add("get_assistant_conversation");
    expect((await s.call("POST", "/assistant/actions/act_none/confirm")).status).toBe(404);
    exercised.add("confirm_assistant_action");

    await op("delete_group", { project: "web-shop", groupId: group.id });
    await op("delete_automation", { project: "web-shop", automationId: browser.id });
    expect((await s.call("GET", `/projects/web-shop/runs/${run.id}`)).status).toBe(200);
    await op("delete_feature", { project: "web-shop", feature: feature.id });
    await op("delete_environment", { project: "web-shop", environmentId: env.id });
    await op("delete_project", { project: "web-shop" });
    expect((await s.call("GET", "/projects/web-shop")).status).toBe(404);

    expect([...exercised].sort()).toEqual(operations.map((o) => o.name).sort());
  }, 60_000);

  test("members cannot manage members or delete projects (403)", async () => {
    const m = await s.userWithKey("plain@acme.test", "acme", "member");
    await s.call("POST", "/projects", { name: "Keep", slug: "keep" });
    const del = await s.call("DELETE", "/projects/keep", undefined, m.key);
    expect(del.status).toBe(403);
    expect((await del.json()).error).toBe("forbidden");
    expect((await s.call("POST", "/members", { email: "z@acme.test" }, m.key)).status).toBe(403);
    expect((await s.call("GET", "/projects/keep", undefined, m.key)).status).toBe(200);
  });
});

describe("the OpenAPI document", () => {
  test("is valid OpenAPI 3.1 for a real parser and covers every operation", async () => {
    const doc = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
    expect(doc.openapi).toBe("3.1.0");
    const validated = (await SwaggerParser.validate(structuredClone(doc) as never)) as unknown as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const ids: string[] = [];
    for (const [path, item] of Object.entries(validated.paths)) {
      expect(path.startsWith(API_PREFIX)).toBe(true);
      for (const o of Object.values(item)) ids.push(o.operationId);
    }
    expect(ids.sort()).toEqual(operations.map((o) => o.name).sort());
    const schemes = (doc.components as { securitySchemes: Record<string, { scheme: string }> }).securitySchemes;
    expect(schemes.bearerAuth?.scheme).toBe("bearer");
    expect(JSON.stringify(doc)).not.toContain("#/$defs/");
    const text = JSON.stringify(doc);
    for (const ref of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      expect((doc.components as { schemas: Record<string, unknown> }).schemas[ref[1] as string]).toBeDefined();
    }
  });
});
