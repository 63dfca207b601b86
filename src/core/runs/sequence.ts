// Sequential group runs: one run at a time in the group's order. Only the first run is queued at the start; the
// group run keeps the rest as `pending`, and each is queued when the run before it ends (finishRuns calls
// advanceSequentialGroupRuns), so the run engine never has two of them at once. With stop_on_failure, a run that
// does not pass ends the group run: the rest are recorded as cancelled runs that did not run. A cancelled run always
// ends it.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";
import type { Core } from "../context";
import { StringList, StringMap as StringMapColumn } from "../shared/columns";
import { readJsonColumn, readJsonColumnOr } from "../shared/json";
import { nowIso } from "../shared/time";
import * as automations from "../automations/store";
import { forgetOneRunSecrets, keepOneRunSecrets, peekOneRunSecrets } from "./one-run-secrets";
import { runRow } from "./run-rows";
import * as store from "./store";

const STOPPED_ON_FAILURE = "not run: an earlier run of the sequential group run did not pass (stop_on_failure)";

/** A sequential group run moved on by another node (or call) while this one queued its next run: nothing is kept. */
class MovedOn extends Error {}

/** Ends these group runs' pending automations as not run (cancelled, with `reason`). */
export async function stopSequentialGroupRuns(core: Core, db: Kysely<DB>, groupRunIds: string[], reason: string): Promise<void> {
  for (const id of new Set(groupRunIds)) {
    const gr = await store.readGroupRun(db, id);
    if (!gr || gr.pending === "[]") continue;
    const pending = readJsonColumn(StringList, gr.pending, `pending of group run ${gr.id}`);
    const t = nowIso();
    if (!(await store.setPending(db, gr.id, gr.pending, "[]", t))) continue;
    const rows = await automations.automationsAmong(db, gr.project_id, pending);
    let position = await store.runCountOfGroupRun(db, gr.id);
    const options = { environmentId: gr.environment_id, variables: {}, secrets: {}, metadata: {}, scheduleId: gr.schedule_id, startedBy: gr.started_by };
    const notRun = pending
      .map((aid) => rows.find((r) => r.id === aid))
      .filter((a) => a !== undefined)
      .map((a) => runRow(a, { projectId: gr.project_id, groupRunId: gr.id, position: position++, trigger: gr.trigger, options, now: t, notRun: reason }));
    await store.insertRuns(db, notRun);
    forgetOneRunSecrets(core, gr.id);
  }
}

/**
 * After runs ended: queues the next run of each sequential group run they belong to (or stops it). Answers whether
 * a run was queued, so the engine can be told.
 */
export async function advanceSequentialGroupRuns(
  core: Core,
  runIds: string[],
  /** Called in the transaction that ends a group run here (stopped, or nothing left to queue), with its last run. */
  whenEnded: (trx: Kysely<DB>, runId: string) => Promise<void> = async () => {},
): Promise<boolean> {
  const ended = await store.sequentialGroupRunsOf(core.db, runIds);
  let queued = false;
  const ending = async (trx: Kysely<DB>, runId: string) => {
    await whenEnded(trx, runId);
    return false;
  };
  for (const e of ended) {
    if (e.run_status === "queued" || e.run_status === "running") continue;
    const stop = e.run_status === "cancelled" ? "not run: an earlier run of the sequential group run was cancelled" : null;
    queued =
      (await core.db
        .transaction()
        .execute(async (trx) => {
          const gr = await store.readGroupRun(trx, e.group_run_id);
          if (!gr || gr.pending === "[]") return false;
          if (stop || (e.run_status !== "passed" && gr.stop_on_failure === 1)) {
            await stopSequentialGroupRuns(core, trx, [gr.id], stop ?? STOPPED_ON_FAILURE);
            return ending(trx, e.run_id);
          }
          const pending = readJsonColumn(StringList, gr.pending, `pending of group run ${gr.id}`);
          const t = nowIso();
          let position = await store.runCountOfGroupRun(trx, gr.id);
          const previous = await store.runOverrides(trx, [e.run_id]);
          const secretNames = readJsonColumnOr(StringList, previous[0]?.one_run_secrets ?? "[]", []);
          const options = {
            environmentId: gr.environment_id,
            variables: readJsonColumnOr(StringMapColumn, gr.variables, {}),
            secrets: peekOneRunSecrets(core, gr.id) ?? {},
            metadata: readJsonColumnOr(StringMapColumn, gr.metadata, {}),
            scheduleId: gr.schedule_id,
            startedBy: gr.started_by,
          };
          const rest = [...pending];
          while (rest.length > 0) {
            const id = rest.shift() as string;
            const a = await automations.findAutomation(trx, gr.project_id, id);
            if (!a) continue;
            const at = { projectId: gr.project_id, groupRunId: gr.id, position: position++, trigger: gr.trigger, options, now: t, secretNames };
            if (a.status === "disabled") {
              await store.insertRuns(trx, [runRow(a, { ...at, notRun: "not run: the automation is disabled" })]);
              continue;
            }
            const run = runRow(a, at);
            // Moved on by someone else meanwhile: the "not run" rows written above go too (rolled back).
            if (!(await store.setPending(trx, gr.id, gr.pending, JSON.stringify(rest), t))) throw new MovedOn();
            await store.insertRuns(trx, [run]);
            await store.insertMetadata(trx, [run.id], options.metadata);
            await store.markAutomationQueued(trx, a.id, run.id, t);
            keepOneRunSecrets(core, run.id, options.secrets);
            if (rest.length === 0) forgetOneRunSecrets(core, gr.id);
            return true;
          }
          if (!(await store.setPending(trx, gr.id, gr.pending, "[]", t))) throw new MovedOn();
          forgetOneRunSecrets(core, gr.id);
          return ending(trx, e.run_id);
        })
        .catch((err) => {
          if (err instanceof MovedOn) return false;
          throw err;
        })) || queued;
  }
  return queued;
}
