// The daily roll-ups as runs end in batches: counts add up across batches, durations land in their buckets and
// merge with those already stored, and a damaged stored histogram counts as empty instead of failing the batch
// (which would leave every run of it unrecorded).
import { expect, test } from "bun:test";
import { callOperation } from "../src/core/call";
import { claimQueuedRuns, finishRuns, type RunOutcome } from "../src/core/runs/queue";
import { openTestCore } from "./helpers/core";

const outcome = (r: { id: string; claim: number; automationId: string; startedAt: string }, status: "passed" | "failed", durationMs: number): RunOutcome => ({
  id: r.id,
  claim: r.claim,
  automationId: r.automationId,
  status,
  startedAt: r.startedAt,
  finishedAt: new Date().toISOString(),
  durationMs,
  error: null,
  summary: { steps: 1, passed: status === "passed" ? 1 : 0, failed: status === "passed" ? 0 : 1, skipped: 0 },
  resultsJson: '{"steps":[],"artifacts":[]}',
  attempts: [{ attempt: 1, status, error: null, message: null, duration_ms: durationMs }],
});

test("roll-ups add up over batches, merge their duration buckets, and count a damaged stored histogram as empty", async () => {
  const { core, as, close } = await openTestCore("svc-dailies-", { local: false });
  try {
    await callOperation(core, as, "createProject", { body: { name: "Shop", slug: "shop" } });
    const a = (await callOperation(core, as, "createAutomation", {
      params: { project: "shop" },
      body: { name: "health", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/health" } }] },
    })) as { id: string };
    const history = async () =>
      (await callOperation(core, as, "getAutomationHistory", { params: { project: "shop", automationId: a.id }, query: { days: 1 } })) as {
        runs: number;
        passed: number;
        failed: number;
        p50_ms: number | null;
        p95_ms: number | null;
      };
    /** Percentiles come from log-scale buckets: within 2.5% of the exact value. */
    const near = (got: number | null, want: number) => expect(Math.abs((got ?? Number.NaN) - want)).toBeLessThanOrEqual(want * 0.025 + 1);
    const expectHistory = async (counts: { runs: number; passed: number; failed: number }, p50: number, p95: number) => {
      const h = await history();
      expect(h).toMatchObject(counts);
      near(h.p50_ms, p50);
      near(h.p95_ms, p95);
    };
    /** Queues `durations.length` runs of the automation, claims them and finishes them in one batch. */
    const batch = async (durations: number[], status: "passed" | "failed") => {
      for (const _ of durations) await callOperation(core, as, "runAutomation", { params: { project: "shop", automationId: a.id }, body: {} });
      const claimed = await claimQueuedRuns(core, durations.length);
      expect(claimed.length).toBe(durations.length);
      await finishRuns(
        core,
        claimed.map((r, i) => outcome(r, status, durations[i] as number)),
      );
    };

    await batch([10, 10, 1000], "passed");
    await expectHistory({ runs: 3, passed: 3, failed: 0 }, 10, 1000);
    // A second batch adds to the stored row: its buckets merge with those stored (10 ms twice more, 5000 once).
    await batch([10, 10, 5000], "failed");
    await expectHistory({ runs: 6, passed: 3, failed: 3 }, 10, 5000);

    // A stored histogram that is not one (damaged by hand, an old bug): the counts go on, its durations restart.
    const damaged = JSON.stringify("not a histogram");
    await core.db.updateTable("run_daily").set({ durations: damaged }).where("automation_id", "=", a.id).execute();
    await batch([2000], "passed");
    await expectHistory({ runs: 7, passed: 4, failed: 3 }, 2000, 2000);
    await core.db.updateTable("run_daily").set({ durations: "{broken" }).where("automation_id", "=", a.id).execute();
    await batch([30], "passed");
    await expectHistory({ runs: 8, passed: 5, failed: 3 }, 30, 30);
  } finally {
    await close();
  }
});
