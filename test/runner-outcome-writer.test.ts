// The batch writer of finished runs: outcomes wait a few milliseconds to share one transaction, but a full batch
// is written at once, also while outcomes keep pouring in (a large group run at many slots): they must not all
// wait for the last one.
import { expect, test } from "bun:test";
import { callOperation } from "../src/core/call";
import { type ClaimedRun, claimQueuedRuns } from "../src/core/runs/queue";
import { runOutcome } from "../src/runner/engine";
import { OutcomeWriter } from "../src/runner/outcome-writer";
import { openTestCore } from "./helpers/core";

test("outcomes arriving without pause are written in batches as they come, not all after the last one", async () => {
  // runner.local off: only this test claims the runs.
  const { core, as, close } = await openTestCore("svc-outcome-writer-", { local: false });
  try {
    await callOperation(core, as, "createProject", { body: { name: "shop", slug: "shop" } });
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const a = await callOperation(core, as, "createAutomation", {
        params: { project: "shop" },
        body: { name: `check ${i}`, kind: "http", steps: [{ request: { url: `http://127.0.0.1:9/items/${i}` } }] },
      });
      ids.push(a.id);
    }
    const group = await callOperation(core, as, "createGroup", { params: { project: "shop" }, body: { name: "all", automation_ids: ids } });
    for (let i = 0; i < 12; i++) await callOperation(core, as, "runGroup", { params: { project: "shop", groupId: group.id }, body: {} });
    const claimed: ClaimedRun[] = [];
    for (;;) {
      const runs = await claimQueuedRuns(core, 256);
      if (runs.length === 0) break;
      claimed.push(...runs);
    }
    expect(claimed.length).toBe(1200);

    const writer = new OutcomeWriter(core);
    const result = {
      status: "passed" as const,
      error: null,
      summary: { steps: 1, passed: 1, failed: 0, skipped: 0 },
      steps: [],
      artifacts: [],
      attempts: [{ attempt: 1, status: "passed" as const, error: null, message: null, duration_ms: 1 }],
    };
    // As a busy server receives them: 25 in each message from a worker, a few tenths of a millisecond of other work
    // after each, the event loop turning in between (never idle for a timer's millisecond).
    let most = 0;
    for (let i = 0; i < claimed.length; i++) {
      writer.add(runOutcome(claimed[i] as ClaimedRun, result));
      most = Math.max(most, writer.size);
      if (i % 25 === 24) {
        const busy = performance.now();
        while (performance.now() - busy < 0.3);
        await new Promise<void>((r) => setImmediate(r));
      }
    }
    // A full batch (250) went to the database while the rest still came: before, every outcome waited for the last.
    expect(most).toBeLessThan(claimed.length);
    await writer.close();
    const counts = await core.db
      .selectFrom("runs")
      .select(({ fn }) => ["status", fn.countAll<number>().as("n")])
      .groupBy("status")
      .execute();
    expect(counts.map((c) => [c.status, Number(c.n)])).toEqual([["passed", 1200]]);
  } finally {
    await close();
  }
}, 60_000);
