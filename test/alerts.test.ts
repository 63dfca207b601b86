// Alert channels against real receivers: a local HTTP server verifying signatures, a real SMTP server for email.
// Alerts arrive once per state change (failing once, recovered once), a failed delivery is retried with the same
// body and X-Svc-Delivery, and every delivery is listed with its outcome.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import type { Server } from "bun";
import { SMTPServer } from "smtp-server";
import { json, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const SECRET = "whsec-Alert-7c1d2e9f";

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}
interface Delivery {
  delivery_id: string;
  event: string;
  status: string;
  attempts: number;
  status_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

let s: TestServer;
let target: TargetApp;
let receiver: Server<undefined>;
let hookUrl: string;
const received: Received[] = [];
/** The receiver answers 500 to this many requests before answering 204 again. */
let failNext = 0;
let smtp: SMTPServer;
let smtpPort = 0;
const mails: { to: string[]; text: string }[] = [];

beforeAll(async () => {
  target = startTargetApp();
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers), body: await req.text(), at: Date.now() });
      if (failNext > 0) {
        failNext--;
        return new Response("down", { status: 500 });
      }
      return new Response(null, { status: 204 });
    },
  });
  hookUrl = `http://127.0.0.1:${receiver.port}/hook`;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      let text = "";
      stream.on("data", (c: Buffer) => {
        text += c.toString("utf8");
      });
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  smtpPort = (smtp.server.address() as { port: number }).port;
  s = await startTestServer({
    rate_limit: { enabled: false },
    base_url: "https://svc.example.test",
    alerts: { retry_first_ms: 300, retry_max_attempts: 3, smtp: { host: "127.0.0.1", port: smtpPort, from: "svc <svc@acme.test>" } },
  });
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "staging", variables: { BASE_URL: target.url } }), 201);
}, 60_000);
afterAll(async () => {
  await s.stop();
  await target.stop();
  await receiver.stop(true);
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const steps = (status: number) => [{ request: { url: "/health" }, expect: [{ status }] }];
async function automation(name: string): Promise<string> {
  const a = await json<{ id: string }>(
    await s.call("POST", "/projects/shop/automations", { name, kind: "http", environment: "staging", steps: steps(200) }),
    201,
  );
  return a.id;
}
/** Runs the automation, passing or failing as asked, to its end. */
async function runAs(id: string, outcome: "passed" | "failed") {
  await json(await s.call("PATCH", `/projects/shop/automations/${id}`, { steps: steps(outcome === "passed" ? 200 : 418) }));
  const run = await json<{ id: string }>(await s.call("POST", `/projects/shop/automations/${id}/run`, {}), 202);
  const done = await waitForRun(s, "shop", run.id);
  expect(done.status).toBe(outcome);
  return done as typeof done & { finished_at: string };
}
const deliveries = async (channel: string) =>
  (await json<{ data: Delivery[] }>(await s.call("GET", `/projects/shop/alert-channels/${channel}/deliveries`))).data;
const hooks = (deliveryId?: string) => received.filter((r) => r.path === "/hook" && (deliveryId === undefined || r.headers["x-svc-delivery"] === deliveryId));
const signed = (r: Received) => r.headers["x-svc-signature-256"] === `sha256=${createHmac("sha256", SECRET).update(r.body).digest("hex")}`;

describe("alert channels", () => {
  test("bad channels are 400 naming the field (http(s) urls only, secrets of 8+ characters) and nothing is created", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "x", kind: "webhook", url: "file:///etc/passwd", secret: SECRET }, "url"],
      [{ name: "x", kind: "webhook", url: "ftp://example.com/x", secret: SECRET }, "url"],
      [{ name: "x", kind: "webhook", url: "not a url", secret: SECRET }, "url"],
      [{ name: "x", kind: "webhook", url: hookUrl }, "secret"],
      [{ name: "x", kind: "webhook", url: hookUrl, secret: "short" }, "secret"],
      [{ name: "x", kind: "slack", url: hookUrl, secret: SECRET }, "secret"],
      [{ name: "x", kind: "email" }, "email_to"],
      [{ name: "x", kind: "email", email_to: ["not-an-address"] }, "email_to"],
      [{ name: "x", kind: "webhook", url: hookUrl, secret: SECRET, events: ["exploded"] }, "events"],
    ];
    for (const [body, field] of cases) {
      const err = await json<{ error: string; details: { path: string }[] }>(await s.call("POST", "/projects/shop/alert-channels", body), 400);
      expect({ body, paths: err.details.map((d) => d.path) }).toMatchObject({
        body,
        paths: expect.arrayContaining([expect.stringMatching(new RegExp(`^(body\\.)?${field}`))]),
      });
    }
    expect((await json<{ data: unknown[] }>(await s.call("GET", "/projects/shop/alert-channels"))).data).toHaveLength(0);
  });

  test("the secret is write-only: answers say has_secret and never carry it", async () => {
    const res = await s.call("POST", "/projects/shop/alert-channels", { name: "ops hook", kind: "webhook", url: hookUrl, secret: SECRET });
    const text = await res.text();
    expect(res.status).toBe(201);
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text)).toMatchObject({
      kind: "webhook",
      has_secret: true,
      events: ["failing", "recovered", "flaky", "schedule_failed"],
      remind_every: null,
    });
    const read = await (await s.call("GET", "/projects/shop/alert-channels/ops hook".replace(" ", "%20"))).text();
    expect(read).not.toContain(SECRET);
    expect(JSON.parse(read).has_secret).toBe(true);
  });

  test("passing → failing alerts once, more failures do not repeat, failing → passing alerts recovered once; signed, within 2 s", async () => {
    const id = await automation("home");
    await runAs(id, "passed");
    const failed = await runAs(id, "failed");
    expect(await waitUntil(() => hooks().length >= 1, 10_000)).toBe(true);
    const [failing] = hooks();
    if (!failing) throw new Error("no delivery");
    expect(failing.at - Date.parse(failed.finished_at)).toBeLessThan(2000);
    await runAs(id, "failed");
    await runAs(id, "failed");
    const recoveredRun = await runAs(id, "passed");
    expect(await waitUntil(() => hooks().length >= 2, 10_000)).toBe(true);
    await runAs(id, "passed");
    // Every delivery of the runs above has been written (in the runs' own transactions) and sent by now.
    const list = await deliveries("ops hook");
    expect(await waitUntil(() => hooks().length >= list.length, 10_000)).toBe(true);
    const events = hooks().map((r) => r.headers["x-svc-event"]);
    expect(events).toEqual(["failing", "recovered"]);
    for (const r of hooks()) {
      expect(signed(r)).toBe(true);
      expect(JSON.parse(r.body).event).toBe(r.headers["x-svc-event"]);
    }
    expect(list.map((d) => [d.event, d.status, d.attempts, d.status_code])).toEqual([
      ["recovered", "delivered", 1, 204],
      ["failing", "delivered", 1, 204],
    ]);
    expect(new Set(hooks().map((r) => r.headers["x-svc-delivery"]))).toEqual(new Set(list.map((d) => d.delivery_id)));
    const recovered = JSON.parse(hooks()[1]?.body ?? "{}");
    expect(recovered.run.id).toBe(recoveredRun.id);
    // The body, ids and times aside, is the documented one.
    const body = JSON.parse(failing.body);
    const stable = {
      ...body,
      occurred_at: "<time>",
      project: { ...body.project, id: "<prj>" },
      automation: { ...body.automation, id: "<aut>" },
      environment: { ...body.environment, id: "<env>" },
      run: { ...body.run, id: "<run>", url: body.run.url.replace(failed.id, "<run>") },
    };
    expect(stable).toMatchSnapshot();
  }, 60_000);

  test("a failed delivery is retried after a delay that doubles, with the identical body and X-Svc-Delivery", async () => {
    const before = hooks().length;
    failNext = 2;
    const sent = await json<Delivery>(await s.call("POST", "/projects/shop/alert-channels/ops%20hook/test"), 202);
    expect(sent).toMatchObject({ event: "test", status: "pending" });
    expect(await waitUntil(() => hooks(sent.delivery_id).length >= 3, 15_000)).toBe(true);
    const tries = hooks(sent.delivery_id);
    expect(hooks().length - before).toBe(3);
    expect(new Set(tries.map((r) => r.body)).size).toBe(1);
    expect(tries.every(signed)).toBe(true);
    const [a, b, c] = tries.map((r) => r.at);
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(250);
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(550);
    let row: Delivery | undefined;
    for (let i = 0; i < 100 && row?.status !== "delivered"; i++) {
      row = (await deliveries("ops hook")).find((d) => d.delivery_id === sent.delivery_id);
      if (row?.status !== "delivered") await Bun.sleep(20);
    }
    expect(row).toMatchObject({ status: "delivered", attempts: 3, status_code: 204, error: null, next_attempt_at: null });
  }, 30_000);

  test("a delivery that keeps failing is marked failed after alerts.retry_max_attempts, with the last status and error", async () => {
    failNext = 10;
    const sent = await json<Delivery>(await s.call("POST", "/projects/shop/alert-channels/ops%20hook/test"), 202);
    let row: Delivery | undefined;
    const deadline = Date.now() + 15_000;
    while (row?.status !== "failed" && Date.now() < deadline) {
      row = (await deliveries("ops hook")).find((d) => d.delivery_id === sent.delivery_id);
      if (row?.status !== "failed") await Bun.sleep(50);
    }
    failNext = 0;
    expect(row).toMatchObject({ status: "failed", attempts: 3, status_code: 500, next_attempt_at: null });
    expect(row?.error).toContain("500");
    expect(hooks(sent.delivery_id)).toHaveLength(3);
  }, 30_000);

  test("slack gets the incoming-webhook format, unsigned", async () => {
    const slack = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/alert-channels", { name: "team slack", kind: "slack", url: hookUrl.replace("/hook", "/slack") }),
      201,
    );
    // Its URL is the secret that lets anyone post to the channel: every read shows its origin only, and an edit that
    // sends that back (an edit form, `show --json` → `update --file`) keeps the URL.
    const shown = `${new URL(hookUrl).origin}/…`;
    const read = await json<{ url: string }>(await s.call("GET", `/projects/shop/alert-channels/${slack.id}`));
    expect(read.url).toBe(shown);
    const listed = await json<{ data: { id: string; url: string }[] }>(await s.call("GET", "/projects/shop/alert-channels"));
    expect(listed.data.find((c) => c.id === slack.id)?.url).toBe(shown);
    const renamed = await json<{ url: string }>(await s.call("PATCH", `/projects/shop/alert-channels/${slack.id}`, { name: "team slack", url: shown }));
    expect(renamed.url).toBe(shown);
    await json(await s.call("POST", `/projects/shop/alert-channels/${slack.id}/test`), 202);
    expect(await waitUntil(() => received.some((r) => r.path === "/slack"), 10_000)).toBe(true);
    const got = received.find((r) => r.path === "/slack");
    expect(got?.headers["x-svc-signature-256"]).toBeUndefined();
    expect(JSON.parse(got?.body ?? "{}")).toEqual({ text: expect.stringContaining('channel "team slack" test alert') });
    await s.call("DELETE", `/projects/shop/alert-channels/${slack.id}`);
  });

  test("email goes through the configured SMTP server to the channel's recipients", async () => {
    await json(await s.call("POST", "/projects/shop/alert-channels", { name: "mail", kind: "email", email_to: ["qa@acme.test"], events: ["failing"] }), 201);
    const id = await automation("billing");
    const failed = await runAs(id, "failed");
    expect(await waitUntil(() => mails.length >= 1, 10_000)).toBe(true);
    const [mail] = mails;
    expect(mail?.to).toEqual(["qa@acme.test"]);
    expect(mail?.text).toContain('automation "billing" in staging is failing');
    expect(mail?.text).toContain(failed.id);
    const list = await deliveries("mail");
    expect(list.map((d) => [d.event, d.status])).toEqual([["failing", "delivered"]]);
  }, 30_000);

  test("a group run alerts about its group once it ends; a schedule that cannot start runs raises schedule_failed once", async () => {
    const mark = hooks().length;
    const a = await automation("cart");
    const b = await automation("search");
    await json(await s.call("PATCH", `/projects/shop/automations/${b}`, { steps: steps(418) }));
    const group = await json<{ id: string }>(await s.call("POST", "/projects/shop/groups", { name: "storefront", automation_ids: [a, b] }), 201);
    const gr = await json<{ id: string }>(await s.call("POST", `/projects/shop/groups/${group.id}/run`, {}), 202);
    expect(
      await waitUntil(
        () =>
          hooks()
            .slice(mark)
            .some((r) => JSON.parse(r.body).group),
        15_000,
      ),
    ).toBe(true);
    const groupAlert = JSON.parse(
      hooks()
        .slice(mark)
        .find((r) => JSON.parse(r.body).group)?.body ?? "{}",
    );
    expect(groupAlert).toMatchObject({ event: "failing", group: { id: group.id, name: "storefront" }, run: { id: gr.id, status: "failed" } });
    expect(groupAlert.run.url).toBe(`https://svc.example.test/#/p/shop/group-runs/${gr.id}`);
    // Members of a group run move the group's state, not their automations' one by one.
    expect(
      hooks()
        .slice(mark)
        .filter((r) => JSON.parse(r.body).automation),
    ).toHaveLength(0);

    const ghost = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/schedules", { name: "ghost", target: { tags: ["nobody"] }, interval_seconds: 3600 }),
      201,
    );
    const makeDue = () => s.sql("UPDATE schedules SET next_run_at = ? WHERE id = ?", new Date(Date.now() - 1000).toISOString(), ghost.id);
    const failedTicks = async () =>
      (await s.sql<{ n: number }>("SELECT COUNT(*) AS n FROM schedule_fires WHERE schedule_id = ? AND error IS NOT NULL", ghost.id))[0]?.n ?? 0;
    await makeDue();
    expect(await waitUntil(() => hooks().some((r) => r.headers["x-svc-event"] === "schedule_failed"), 15_000)).toBe(true);
    const failure = JSON.parse(hooks().find((r) => r.headers["x-svc-event"] === "schedule_failed")?.body ?? "{}");
    expect(failure).toMatchObject({ event: "schedule_failed", schedule: { id: ghost.id, name: "ghost" }, run: null, previous_status: null });
    expect(failure.error).toContain("nobody");
    await makeDue();
    expect(await waitUntilAsync(async () => (await failedTicks()) >= 2, 15_000)).toBe(true);
    const record = await json<{ last_error: string | null }>(await s.call("GET", `/projects/shop/schedules/${ghost.id}`));
    expect(record.last_error).toContain("nobody");
    const list = await deliveries("ops hook");
    expect(list.filter((d) => d.event === "schedule_failed")).toHaveLength(1);
  }, 60_000);

  test("a group run's alert follows its verdict: a quarantined automation's failure neither raises failing nor holds off recovered", async () => {
    const ch = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/alert-channels", { name: "quarantine hook", kind: "webhook", url: hookUrl, secret: SECRET }),
      201,
    );
    const ok = await automation("quarantine ok");
    const bad = await automation("quarantine bad");
    await json(await s.call("PATCH", `/projects/shop/automations/${bad}`, { steps: steps(418) }));
    const group = await json<{ id: string }>(await s.call("POST", "/projects/shop/groups", { name: "quarantine suite", automation_ids: [ok, bad] }), 201);
    const runGroup = async (expected: string) => {
      const gr = await json<{ id: string }>(await s.call("POST", `/projects/shop/groups/${group.id}/run`, {}), 202);
      const done = await json<{ status: string }>(await s.call("GET", `/projects/shop/group-runs/${gr.id}?wait=30`));
      expect(done.status).toBe(expected);
    };
    // The group's alert state is written with the group run's end: its deliveries are listed once the group run reads ended.
    const groupEvents = async () => (await deliveries(ch.id)).map((d) => d.event).reverse(); // newest first as listed
    await runGroup("failed");
    expect(await groupEvents()).toEqual(["failing"]);
    await json(await s.call("PATCH", `/projects/shop/automations/${bad}`, { quarantined: true }));
    await runGroup("passed");
    expect(await groupEvents()).toEqual(["failing", "recovered"]);
    await runGroup("passed");
    expect(await groupEvents()).toEqual(["failing", "recovered"]);
    expect(await waitUntil(() => hooks().some((r) => JSON.parse(r.body).event === "recovered" && JSON.parse(r.body).group?.id === group.id), 15_000)).toBe(
      true,
    );
  }, 60_000);

  test("remind_every repeats a lasting failure once the interval has passed, not before", async () => {
    const ch = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/alert-channels", {
        name: "pager",
        kind: "webhook",
        url: hookUrl,
        secret: SECRET,
        events: ["failing"],
        remind_every: 60,
      }),
      201,
    );
    const id = await automation("login");
    await runAs(id, "failed");
    await runAs(id, "failed");
    expect((await deliveries(ch.id)).map((d) => d.event)).toEqual(["failing"]);
    // An hour later (as far as the outbox knows), the next failure reminds once.
    await s.sql("UPDATE alert_deliveries SET created_at = ? WHERE channel_id = ?", new Date(Date.now() - 3_600_000).toISOString(), ch.id);
    await runAs(id, "failed");
    await runAs(id, "failed");
    expect((await deliveries(ch.id)).map((d) => d.event)).toEqual(["failing", "failing"]);
  }, 60_000);

  test("a run that passes only after a retry raises flaky once, not again while it stays flaky", async () => {
    const mark = hooks().length;
    const body = (key: string) => ({
      name: `flaky ${key}`,
      kind: "http",
      environment: "staging",
      retries: 1,
      steps: [{ request: { url: `/flaky/${key}?fail=1` }, expect: [{ status: 200 }] }],
    });
    const a = await json<{ id: string }>(await s.call("POST", "/projects/shop/automations", body("f1")), 201);
    const run = async () => {
      const r = await json<{ id: string }>(await s.call("POST", `/projects/shop/automations/${a.id}/run`, {}), 202);
      return waitForRun(s, "shop", r.id);
    };
    const first = await run();
    expect(first.status).toBe("passed");
    expect(first.attempts).toHaveLength(2);
    expect(
      await waitUntil(
        () =>
          hooks()
            .slice(mark)
            .some((r) => r.headers["x-svc-event"] === "flaky"),
        10_000,
      ),
    ).toBe(true);
    const flaky = JSON.parse(
      hooks()
        .slice(mark)
        .find((r) => r.headers["x-svc-event"] === "flaky")?.body ?? "{}",
    );
    expect(flaky).toMatchObject({ event: "flaky", automation: { id: a.id }, run: { id: first.id, status: "passed" }, previous_status: null });
    // The same path fails once more for a new key only: point it at a fresh key so the retry is needed again.
    await json(await s.call("PATCH", `/projects/shop/automations/${a.id}`, { steps: body("f2").steps }));
    expect((await run()).attempts).toHaveLength(2);
    const list = await deliveries("ops hook");
    expect(list.filter((d) => d.event === "flaky")).toHaveLength(1);
  }, 60_000);
});
