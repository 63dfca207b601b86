// What a schedule's due times do besides starting runs, against the real server and a webhook receiver: one whose
// previous run (or group run) has not ended is skipped, said on the schedule and alerting no one; and a schedule
// that starts runs again after schedule_failed only re-arms it, with no "recovered" while what it runs still fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { json, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

interface LastFire {
  due_at: string;
  fired_at: string;
  outcome: "started" | "skipped" | "failed";
  reason: string | null;
  run_id: string | null;
  group_run_id: string | null;
}
interface ScheduleRecord {
  id: string;
  last_error: string | null;
  last_fire: LastFire | null;
}
interface Delivery {
  event: string;
}
interface Hook {
  event: string;
  body: Record<string, unknown>;
}

let s: TestServer;
let target: TargetApp;
let receiver: Server<undefined>;
const hooks: Hook[] = [];

beforeAll(async () => {
  target = startTargetApp();
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      hooks.push({ event: req.headers.get("x-svc-event") ?? "", body: (await req.json()) as Record<string, unknown> });
      return new Response(null, { status: 204 });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "staging", variables: { BASE_URL: target.url } }), 201);
  await json(
    await s.call("POST", "/projects/shop/alert-channels", {
      name: "hook",
      kind: "webhook",
      url: `http://127.0.0.1:${receiver.port}/hook`,
      secret: "whsec-Fires-4b7e2a91",
    }),
    201,
  );
}, 60_000);
afterAll(async () => {
  await s.stop();
  await target.stop();
  await receiver.stop(true);
});

/** An http automation of one request, passing when it answers `status`. */
const automation = async (name: string, path: string, extra: Record<string, unknown> = {}, status = 200) =>
  (
    await json<{ id: string }>(
      await s.call("POST", "/projects/shop/automations", {
        name,
        kind: "http",
        environment: "staging",
        steps: [{ request: { url: path }, expect: [{ status }] }],
        ...extra,
      }),
      201,
    )
  ).id;
const schedule = async (name: string, t: Record<string, unknown>) =>
  json<ScheduleRecord>(await s.call("POST", "/projects/shop/schedules", { name, target: t, interval_seconds: 3600 }), 201);
const read = async (id: string) => json<ScheduleRecord>(await s.call("GET", `/projects/shop/schedules/${id}`));
const fireCount = async (id: string) => (await s.sql<{ n: number }>("SELECT COUNT(*) AS n FROM schedule_fires WHERE schedule_id = ?", id))[0]?.n ?? 0;
/** Makes the schedule due now (as if its hour had passed) and waits until the scheduler has taken that due time. */
async function fireNow(id: string): Promise<ScheduleRecord> {
  const before = Number(await fireCount(id));
  await s.sql("UPDATE schedules SET next_run_at = ? WHERE id = ?", new Date(Date.now() - 1000).toISOString(), id);
  expect(await waitUntilAsync(async () => Number(await fireCount(id)) > before, 15_000)).toBe(true);
  return read(id);
}
const scheduleRuns = async (id: string) =>
  (await json<{ data: { id: string; schedule_id: string | null }[] }>(await s.call("GET", "/projects/shop/runs?limit=200"))).data.filter(
    (r) => r.schedule_id === id,
  );
const deliveries = async () => (await json<{ data: Delivery[] }>(await s.call("GET", "/projects/shop/alert-channels/hook/deliveries?limit=200"))).data;

describe("a due time at which the schedule's previous run has not ended", () => {
  const cases: { kind: string; target: (automationId: string, groupId: string) => Record<string, unknown>; grouped: boolean }[] = [
    { kind: "automation", target: (a) => ({ automation: a }), grouped: false },
    { kind: "group", target: (_, g) => ({ group: g }), grouped: true },
    { kind: "tags", target: () => ({ tags: ["held-tags"] }), grouped: true },
  ];
  for (const c of cases) {
    test(`is skipped, said on the schedule with why, raises no alert, and the next due time starts runs again (${c.kind} target)`, async () => {
      const key = `overlap-${c.kind}`;
      const held = await automation(`held ${c.kind}`, `/hold/${key}?ms=0`, { tags: c.kind === "tags" ? ["held-tags"] : [] });
      const group = await json<{ id: string }>(await s.call("POST", "/projects/shop/groups", { name: `held group ${c.kind}`, automation_ids: [held] }), 201);
      const made = await schedule(`overlap ${c.kind}`, c.target(held, group.id));
      const deliveriesBefore = (await deliveries()).length;

      const first = await fireNow(made.id);
      expect(first.last_fire).toMatchObject({ outcome: "started", reason: null });
      const previous = c.grouped ? first.last_fire?.group_run_id : first.last_fire?.run_id;
      expect(previous).toBeTruthy();
      // The previous run is held at the target: it is running.
      expect(await waitUntil(() => target.held(key).length === 1, 15_000)).toBe(true);

      const second = await fireNow(made.id);
      expect(second.last_fire).toMatchObject({ outcome: "skipped", run_id: null, group_run_id: null });
      expect(second.last_fire?.reason).toContain(c.grouped ? `previous group run ${previous}` : `previous run ${previous}`);
      expect(second.last_fire?.reason).toMatch(c.grouped ? /has not ended/ : /is still running/);
      expect(second.last_error).toBeNull();
      expect(Date.parse(second.last_fire?.due_at ?? "")).toBeGreaterThan(Date.parse(first.last_fire?.due_at ?? ""));
      expect(await scheduleRuns(made.id)).toHaveLength(1);
      // The listing says so too.
      const listed = await json<{ data: ScheduleRecord[] }>(await s.call("GET", "/projects/shop/schedules?limit=200"));
      expect(listed.data.find((x) => x.id === made.id)?.last_fire).toEqual(second.last_fire);
      // The next due time is computed as usual: an hour on.
      const next = (await read(made.id)) as ScheduleRecord & { next_run_at: string };
      expect(Date.parse(next.next_run_at)).toBeGreaterThan(Date.now() + 3_000_000);

      target.release(key);
      const runs = await scheduleRuns(made.id);
      await waitForRun(s, "shop", runs[0]?.id ?? "");
      if (c.grouped) expect((await json<{ status: string }>(await s.call("GET", `/projects/shop/group-runs/${previous}?wait=30`))).status).toBe("passed");
      const third = await fireNow(made.id);
      expect(third.last_fire).toMatchObject({ outcome: "started", reason: null });
      expect(await scheduleRuns(made.id)).toHaveLength(2);
      for (const r of await scheduleRuns(made.id)) await waitForRun(s, "shop", r.id);
      // The runs passed; nothing alerted about the skip (no schedule_failed, nothing else).
      expect((await deliveries()).slice(0, (await deliveries()).length - deliveriesBefore).map((d) => d.event)).toEqual([]);
      await s.call("DELETE", `/projects/shop/schedules/${made.id}`);
    }, 60_000);
  }
});

describe("a schedule that starts runs again after schedule_failed", () => {
  test("raises no recovered (what it runs still fails), and a later failure to start raises schedule_failed again, with previous_status null", async () => {
    // /health answers 200: a run of it fails.
    const failing = await automation("always failing", "/health", { status: "disabled" }, 418);
    const made = await schedule("failing check", { automation: failing });
    const mark = hooks.length;
    const about = (h: Hook, kind: string) => (h.body[kind] as { id?: string } | undefined)?.id;
    const mine = () => hooks.slice(mark).filter((h) => about(h, "schedule") === made.id || about(h, "automation") === failing);

    // Disabled: the due time starts nothing.
    const blocked = await fireNow(made.id);
    expect(blocked.last_fire).toMatchObject({ outcome: "failed" });
    expect(blocked.last_fire?.reason).toContain("disabled");
    expect(await waitUntil(() => mine().some((h) => h.event === "schedule_failed"), 15_000)).toBe(true);
    const failure = mine().find((h) => h.event === "schedule_failed")?.body;
    expect(failure).toMatchObject({ event: "schedule_failed", schedule: { id: made.id }, run: null, previous_status: null });

    // Enabled again: the schedule starts its run, which fails.
    await json(await s.call("PATCH", `/projects/shop/automations/${failing}`, { status: "active" }));
    const started = await fireNow(made.id);
    expect(started.last_fire).toMatchObject({ outcome: "started" });
    expect(started.last_error).toBeNull();
    const run = await waitForRun(s, "shop", started.last_fire?.run_id ?? "");
    expect(run.status).toBe("failed");
    expect(await waitUntil(() => mine().some((h) => h.event === "failing"), 15_000)).toBe(true);

    // Disabled once more: schedule_failed again (starting runs re-armed it), still with no previous status.
    await json(await s.call("PATCH", `/projects/shop/automations/${failing}`, { status: "disabled" }));
    await fireNow(made.id);
    expect(await waitUntil(() => mine().filter((h) => h.event === "schedule_failed").length === 2, 15_000)).toBe(true);
    expect(mine().filter((h) => h.event === "schedule_failed")[1]?.body).toMatchObject({ previous_status: null });

    // Every delivery written by now has been sent: none of them is a "recovered".
    const written = await deliveries();
    expect(await waitUntil(() => hooks.length >= written.length, 15_000)).toBe(true);
    expect(mine().map((h) => h.event)).toEqual(["schedule_failed", "failing", "schedule_failed"]);
    await s.call("DELETE", `/projects/shop/schedules/${made.id}`);
  }, 60_000);
});
