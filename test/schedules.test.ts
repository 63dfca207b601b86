// Schedules: validation and names, protected environments, the real clock firing an interval schedule (runs with
// trigger "schedule" and schedule_id), one fire per due time across two nodes on one database, and no backlog
// after downtime (at most one catch-up).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../config/load";
import { type OpenedCore, openCore } from "../src/core";
import { fireSchedule } from "../src/core/schedules/operations";
import { json, waitForRun } from "./helpers/runs";
import { databaseEnv, startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

let s: TestServer;
let target: TargetApp;
let member: string;
let automationId: string;

interface ScheduleRecord {
  id: string;
  name: string;
  target: Record<string, unknown>;
  enabled: boolean;
  cron: string | null;
  timezone: string | null;
  interval_seconds: number | null;
  next_run_at: string | null;
  next_runs_at: string[];
  last_fired_at: string | null;
  last_error: string | null;
}
interface RunPage {
  data: { id: string; trigger: string; schedule_id: string | null; group_run_id: string | null; automation_id: string }[];
}

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false } });
  member = (await s.userWithKey("member@acme.test", "acme", "member")).key;
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "staging", variables: { BASE_URL: target.url } }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "prod", variables: { BASE_URL: target.url }, protected: true }), 201);
  const health = { kind: "http", environment: "staging", steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }] };
  automationId = (await json<{ id: string }>(await s.call("POST", "/projects/shop/automations", { name: "home", tags: ["smoke", "api"], ...health }), 201)).id;
  await json(await s.call("POST", "/projects/shop/automations", { name: "checkout", tags: ["smoke"], ...health }), 201);
});
afterAll(async () => {
  await s.stop();
  await target.stop();
});

const create = (body: Record<string, unknown>, key?: string) => s.call("POST", "/projects/shop/schedules", body, key);
const schedulesCount = async () => (await json<{ data: unknown[] }>(await s.call("GET", "/projects/shop/schedules?limit=200"))).data.length;
const runsOf = async (scheduleId: string) =>
  (await json<RunPage>(await s.call("GET", "/projects/shop/runs?limit=200"))).data.filter((r) => r.schedule_id === scheduleId);

describe("creating and reading schedules", () => {
  test("bad timing, time zones and targets are 400 naming the field, and nothing is created", async () => {
    const before = await schedulesCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "x", target: { automation: "home" }, interval_seconds: 5 }, "interval_seconds"],
      [{ name: "x", target: { automation: "home" } }, "cron"],
      [{ name: "x", target: { automation: "home" }, cron: "* * * *" }, "cron"],
      [{ name: "x", target: { automation: "home" }, cron: "0 0 * * * *" }, "cron"],
      [{ name: "x", target: { automation: "home" }, cron: "61 * * * *" }, "cron"],
      [{ name: "x", target: { automation: "home" }, cron: "0 9 * * *", interval_seconds: 60 }, "interval_seconds"],
      [{ name: "x", target: { automation: "home" }, cron: "0 9 * * *", timezone: "Mars/Olympus" }, "timezone"],
      [{ name: "x", target: { automation: "nope" }, interval_seconds: 60 }, "target.automation"],
      [{ name: "x", target: { group: "nope" }, interval_seconds: 60 }, "target.group"],
      [{ name: "x", target: { tags: [] }, interval_seconds: 60 }, "target"],
      [{ name: "x", target: { automation: "home" }, interval_seconds: 60, environment: "nope" }, "environment"],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      const err = await json<{ error: string; details: { path: string }[] }>(res, 400);
      expect(err.error).toBe("invalid_request");
      expect({ body, paths: err.details.map((d) => d.path) }).toMatchObject({
        body,
        paths: expect.arrayContaining([expect.stringMatching(new RegExp(`^(body\\.)?${field}`))]),
      });
    }
    expect(await schedulesCount()).toBe(before);
  });

  test("a target naming two kinds says to give exactly one of them", async () => {
    for (const target of [
      { automation: "home", group: "g" },
      { tags: ["smoke"], automation: "home" },
    ]) {
      const err = await json<{ message: string; details: { path: string; message: string }[] }>(
        await create({ name: "two kinds", target, interval_seconds: 60 }),
        400,
      );
      expect(err.details).toHaveLength(1);
      expect(err.details[0]?.path).toMatch(/^(body\.)?target$/);
      expect(err.details[0]?.message).toBe("give exactly one of automation, group or tags");
      expect(err.message).not.toContain("unknown field");
    }
  });

  test("cron values out of range are named as given, with the range allowed", async () => {
    const cases: [string, string][] = [
      ["0 0 32 * *", "day-of-month 32 is out of range (allowed 1-31)"],
      ["0 0 0 * *", "day-of-month 0 is out of range (allowed 1-31)"],
      ["0 0 * 13 *", "month 13 is out of range (allowed 1-12)"],
      ["0 0 * 0 *", "month 0 is out of range (allowed 1-12)"],
    ];
    for (const [cron, message] of cases) {
      const err = await json<{ details: { path: string; message: string }[] }>(await create({ name: "x", target: { automation: "home" }, cron }), 400);
      expect(err.details).toEqual([{ path: "cron", message: `not a valid cron expression: ${message}` }]);
    }
  });

  test("time zones are IANA names or UTC, stored in their canonical spelling; UTC offsets are refused", async () => {
    for (const timezone of ["+02:00", "-0530"]) {
      const err = await json<{ details: { path: string; message: string }[] }>(
        await create({ name: "offset", target: { automation: "home" }, cron: "0 9 * * *", timezone }),
        400,
      );
      expect(err.details.map((d) => d.path)).toEqual(["timezone"]);
      expect(err.details[0]?.message).toContain("IANA");
    }
    const made = await json<ScheduleRecord>(
      await create({ name: "berlin", target: { automation: "home" }, cron: "0 9 * * *", timezone: "europe/berlin" }),
      201,
    );
    expect(made.timezone).toBe("Europe/Berlin");
    expect((await json<ScheduleRecord>(await s.call("GET", `/projects/shop/schedules/${made.id}`))).timezone).toBe("Europe/Berlin");
    const moved = await json<ScheduleRecord>(await s.call("PATCH", `/projects/shop/schedules/${made.id}`, { timezone: "america/new_york" }));
    expect(moved.timezone).toBe("America/New_York");
    expect((await json<ScheduleRecord>(await s.call("PATCH", `/projects/shop/schedules/${made.id}`, { timezone: "utc" }))).timezone).toBe("UTC");
    expect((await s.call("PATCH", `/projects/shop/schedules/${made.id}`, { timezone: "+01:00" })).status).toBe(400);
    await s.call("DELETE", `/projects/shop/schedules/${made.id}`);
  });

  test("a cron schedule shows its next due times in its time zone, and is found by name", async () => {
    const made = await json<ScheduleRecord>(
      await create({ name: "nightly", target: { automation: "home" }, cron: "30 2 * * *", timezone: "Europe/Berlin" }),
      201,
    );
    expect(made.next_runs_at).toHaveLength(5);
    expect(made.next_run_at).toBe(made.next_runs_at[0] ?? null);
    for (const at of made.next_runs_at) {
      const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(new Date(at));
      expect(local).toBe("02:30");
    }
    expect(made.target).toEqual({ automation: automationId });
    const byName = await json<ScheduleRecord>(await s.call("GET", "/projects/shop/schedules/nightly"));
    expect(byName.id).toBe(made.id);
    const off = await json<ScheduleRecord>(await s.call("PATCH", "/projects/shop/schedules/nightly", { enabled: false }));
    expect(off).toMatchObject({ enabled: false, next_run_at: null, next_runs_at: [] });
    await json(await s.call("DELETE", "/projects/shop/schedules/nightly"), 204).catch(() => undefined);
    expect((await s.call("GET", "/projects/shop/schedules/nightly")).status).toBe(404);
  });

  test("only owners and admins schedule runs in a protected environment", async () => {
    const before = await schedulesCount();
    const res = await create({ name: "prod watch", target: { automation: "home" }, environment: "prod", interval_seconds: 600 }, member);
    expect((await json<{ error: string }>(res, 403)).error).toBe("forbidden");
    expect(await schedulesCount()).toBe(before);
    const ok = await json<ScheduleRecord>(await create({ name: "staging watch", target: { automation: "home" }, interval_seconds: 600 }, member), 201);
    const moved = await s.call("PATCH", `/projects/shop/schedules/${ok.id}`, { environment: "prod" }, member);
    expect(moved.status).toBe(403);
    expect((await json<{ environment_id: string | null }>(await s.call("GET", `/projects/shop/schedules/${ok.id}`))).environment_id).toBeNull();
    const byOwner = await s.call("POST", "/projects/shop/schedules", {
      name: "prod watch",
      target: { automation: "home" },
      environment: "prod",
      interval_seconds: 600,
    });
    expect(byOwner.status).toBe(201);
    // Nor stop one an owner set up there: deleting it is refused as changing it is.
    const stopped = await s.call("DELETE", "/projects/shop/schedules/prod%20watch", undefined, member);
    expect((await json<{ error: string; message: string }>(stopped, 403)).message).toBe(
      'the environment "prod" is protected: only owners and admins can delete a schedule that runs in it',
    );
    expect((await s.call("GET", "/projects/shop/schedules/prod%20watch")).status).toBe(200);
    expect((await s.call("DELETE", `/projects/shop/schedules/${ok.id}`, undefined, member)).status).toBe(204);
    expect((await s.call("DELETE", "/projects/shop/schedules/prod%20watch")).status).toBe(204);
  });
});

describe("a schedule an owner set up in a protected environment", () => {
  test("a member may not pause, change or delete it, and the 403 says which of these was refused (not 'start runs')", async () => {
    // The schedule has no environment of its own: its automation's, prod, is protected.
    const prodHome = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/automations", {
        name: "prod home",
        kind: "http",
        environment: "prod",
        steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }],
      }),
      201,
    );
    const made = await json<ScheduleRecord>(await create({ name: "prod check", target: { automation: prodHome.id }, interval_seconds: 600 }), 201);
    const refused = async (res: Response) => (await json<{ error: string; message: string }>(res, 403)).message;
    const base = 'the environment "prod" is protected: only owners and admins can';
    expect(await refused(await s.call("PATCH", `/projects/shop/schedules/${made.id}`, { enabled: false }, member))).toBe(
      `${base} pause a schedule that runs in it`,
    );
    expect(await refused(await s.call("PATCH", `/projects/shop/schedules/${made.id}`, { name: "renamed" }, member))).toBe(
      `${base} change a schedule that runs in it`,
    );
    expect(await refused(await s.call("DELETE", `/projects/shop/schedules/${made.id}`, undefined, member))).toBe(`${base} delete a schedule that runs in it`);
    // Nothing changed; its owner may pause and delete it.
    expect(await json<ScheduleRecord>(await s.call("GET", `/projects/shop/schedules/${made.id}`))).toMatchObject({ name: "prod check", enabled: true });
    expect(await json<ScheduleRecord>(await s.call("PATCH", `/projects/shop/schedules/${made.id}`, { enabled: false }))).toMatchObject({ enabled: false });
    expect((await s.call("DELETE", `/projects/shop/schedules/${made.id}`)).status).toBe(204);
    await s.call("DELETE", `/projects/shop/automations/${prodHome.id}`);
  });
});

describe("firing", () => {
  test("an interval schedule fires on the real clock: its run has trigger schedule and schedule_id, and its next due time moves on", async () => {
    const made = await json<ScheduleRecord>(await create({ name: "every ten", target: { automation: "home" }, interval_seconds: 10 }), 201);
    // The version a page shows, read before the schedule fires.
    const shownTag = (await s.call("GET", `/projects/shop/schedules/${made.id}`)).headers.get("etag") ?? "";
    expect(shownTag).not.toBe("");
    const due = Date.parse(made.next_run_at ?? "");
    expect(due - Date.parse(made.next_runs_at[0] ?? "")).toBe(0);
    expect(Date.parse(made.next_runs_at[1] ?? "") - due).toBe(10_000);
    let runs: RunPage["data"] = [];
    const deadline = Date.now() + 20_000;
    while (runs.length === 0 && Date.now() < deadline) {
      runs = await runsOf(made.id);
      if (runs.length === 0) await Bun.sleep(100);
    }
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: "schedule", schedule_id: made.id, automation_id: automationId });
    expect((await waitForRun(s, "shop", runs[0]?.id ?? "")).status).toBe("passed");
    const after = await json<ScheduleRecord>(await s.call("GET", `/projects/shop/schedules/${made.id}`));
    expect(after.last_fired_at).not.toBeNull();
    expect(Date.parse(after.last_fired_at ?? "")).toBeGreaterThanOrEqual(due);
    expect(Date.parse(after.next_run_at ?? "")).toBe(due + 10_000);
    // Firing is the scheduler's bookkeeping, not an edit: an edit from the version read before it (the web page's
    // If-Match) is not refused as "changed elsewhere", and the fire's bookkeeping survives the edit.
    const paused = await s.call("PATCH", `/projects/shop/schedules/${made.id}`, { name: "every ten, renamed" }, undefined, { "if-match": shownTag });
    expect(paused.status).toBe(200);
    const kept = await json<ScheduleRecord>(await s.call("GET", `/projects/shop/schedules/${made.id}`));
    expect(kept.last_fired_at).toBe(after.last_fired_at);
    expect(kept.next_run_at).toBe(after.next_run_at);
    await s.call("DELETE", `/projects/shop/schedules/${made.id}`);
  }, 30_000);

  test("a tags target starts one group run of the active automations carrying any of the tags, ignoring case (as run_selection)", async () => {
    const draft = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/automations", {
        name: "draft smoke",
        tags: ["smoke"],
        status: "draft",
        kind: "http",
        steps: [{ request: { url: "/health" } }],
      }),
      201,
    );
    // Neither automation carries "nightly": tags match any of those listed, as a selection's do.
    const made = await json<ScheduleRecord>(await create({ name: "smoke", target: { tags: ["SMOKE", "nightly"] }, interval_seconds: 3600 }), 201);
    // The schedule is made due now, as if its hour had passed.
    await s.sql("UPDATE schedules SET next_run_at = ? WHERE id = ?", new Date(Date.now() - 1000).toISOString(), made.id);
    let runs: RunPage["data"] = [];
    const deadline = Date.now() + 10_000;
    while (runs.length < 2 && Date.now() < deadline) {
      runs = await runsOf(made.id);
      if (runs.length < 2) await Bun.sleep(50);
    }
    expect(runs).toHaveLength(2);
    const groupRunId = runs[0]?.group_run_id;
    expect(groupRunId).toBeTruthy();
    expect(runs.every((r) => r.group_run_id === groupRunId && r.trigger === "schedule")).toBe(true);
    const gr = await json<{ trigger: string; schedule_id: string; group_name: string }>(await s.call("GET", `/projects/shop/group-runs/${groupRunId}`));
    expect(gr).toMatchObject({ trigger: "schedule", schedule_id: made.id, group_name: "smoke" });
    expect(runs.some((r) => r.automation_id === draft.id)).toBe(false);
    await s.call("DELETE", `/projects/shop/schedules/${made.id}`);
    await s.call("DELETE", `/projects/shop/automations/${draft.id}`);
  });

  test("a tags target nothing active carries records a clear 409 at its tick and starts nothing", async () => {
    const made = await json<ScheduleRecord>(await create({ name: "nobody", target: { tags: ["no-such-tag"] }, interval_seconds: 3600 }), 201);
    await s.sql("UPDATE schedules SET next_run_at = ? WHERE id = ?", new Date(Date.now() - 1000).toISOString(), made.id);
    let after = made;
    const deadline = Date.now() + 10_000;
    while (after.last_error === null && Date.now() < deadline) {
      after = await json<ScheduleRecord>(await s.call("GET", `/projects/shop/schedules/${made.id}`));
      if (after.last_error === null) await Bun.sleep(50);
    }
    expect(after.last_error).toContain("no active automation carries any of the tags no-such-tag");
    expect(await runsOf(made.id)).toHaveLength(0);
    await s.call("DELETE", `/projects/shop/schedules/${made.id}`);
  });
});

describe("several nodes, and downtime", () => {
  let other: OpenedCore;
  beforeAll(async () => {
    other = await openCore(loadConfig({ env: await databaseEnv(s.dataDir), flags: { data_dir: s.dataDir, log_level: "warn" } }));
  });
  afterAll(async () => {
    await other.close();
  });

  test("two nodes firing the same due time start one run, and a schedule missed for an hour fires one catch-up run", async () => {
    const made = await json<ScheduleRecord>(await create({ name: "missed", target: { automation: "home" }, interval_seconds: 10 }), 201);
    // The schedule was due an hour ago: 360 ticks were missed while no server ran.
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await s.sql("UPDATE schedules SET next_run_at = ? WHERE id = ?", hourAgo, made.id);
    // Both nodes read the schedule as due at that time; each tries to fire it (the server's own scheduler may too).
    const [stale] = (await s.sql("SELECT * FROM schedules WHERE id = ?", made.id)) as Parameters<typeof fireSchedule>[1][];
    if (!stale) throw new Error("the schedule is not stored");
    expect(stale.next_run_at).toBe(hourAgo);
    const now = new Date();
    const a = await fireSchedule(s.server.core, stale, now);
    const b = await fireSchedule(other, stale, now);
    expect(b).toBeNull();
    expect([a, b].filter((f) => f !== null).length).toBeLessThanOrEqual(1);
    const runs = await runsOf(made.id);
    expect(runs).toHaveLength(1);
    const fires = await s.sql<{ due_at: string }>("SELECT due_at FROM schedule_fires WHERE schedule_id = ?", made.id);
    expect(fires).toEqual([{ due_at: hourAgo }]);
    const after = await json<ScheduleRecord>(await s.call("GET", `/projects/shop/schedules/${made.id}`));
    expect(Date.parse(after.next_run_at ?? "")).toBeGreaterThan(now.getTime());
    expect(Date.parse(after.next_run_at ?? "")).toBeLessThanOrEqual(now.getTime() + 10_000);
    await s.call("DELETE", `/projects/shop/schedules/${made.id}`);
  });
});
