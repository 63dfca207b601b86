// The server's side of the runner protocol: a runner says hello, claims runs under a lease, says which it began,
// heart-beats (extending its leases, hearing of cancellations), uploads artifacts, finishes (fenced by its claim
// and its runner id) and releases what it did not begin. Expired leases are swept here too.
import type { Kysely } from "kysely";
import type { z } from "zod";
import type { DB } from "../../db/schema";
import { log } from "../../logging";
import { AppError, conflict, invalid, notFound } from "../../manifest/errors";
import {
  ARTIFACT_NAME,
  type ClaimedJob,
  type Finish,
  type Hello,
  type HelloAnswer,
  type HeartbeatAnswer,
  RUNNER_ARTIFACT_MAX_BYTES,
  RUNNER_PROTOCOL,
} from "../../manifest/runner-protocol";
import { isWellFormedRunnerToken, runnerTokenMatches, runnerTokenPrefix } from "../../security/runner-tokens";
import { VERSION } from "../../version";
import type { Core } from "../context";
import { saveRunArtifact } from "../runs/artifacts";
import { recordEndedRuns } from "../alerts/state";
import {
  finishRuns,
  priorAttempts,
  type RunAttempt,
  type RunEnvironment,
  recordRunProgress,
  runEnvironment,
  runsEndedElsewhere,
  runsStoppedElsewhere,
  withRunRequests,
} from "../runs/queue";
import { RunSpecColumn } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import { nowIso } from "../shared/time";
import { markLastRunErrored } from "../runs/store";
import { type RunnerRow, runnerBrowser, runnerLabels } from "./operations";
import * as store from "./store";

export const LOST_MESSAGE = "runner lost";

/** The runner a bearer token belongs to; null for a malformed, unknown or revoked token. */
export async function authenticateRunner(core: Core, token: string): Promise<RunnerRow | null> {
  if (!isWellFormedRunnerToken(token)) return null;
  const rows = await store.runnersWithPrefix(core.db, runnerTokenPrefix(token));
  const row = rows.find((r) => runnerTokenMatches(token, r.token_hash));
  if (!row || row.revoked_at !== null) return null;
  return row;
}

export function answerHello(core: Core, row: RunnerRow): HelloAnswer {
  const cfg = core.config.runner;
  return {
    runner: { id: row.id, name: row.name, labels: runnerLabels(row), scope: row.workspace_id === null ? "server" : "workspace" },
    server_version: VERSION,
    lease_ms: cfg.lease_ms,
    heartbeat_wait_ms: Math.max(200, Math.floor(cfg.lease_ms / 3)),
    settings: { default_timeout_ms: cfg.default_timeout_ms, response_excerpt_bytes: cfg.response_excerpt_bytes, max_response_bytes: cfg.max_response_bytes },
  };
}

/** Records what the runner is (version, capabilities, extra labels); refuses a runner of another protocol. */
export async function hello(core: Core, row: RunnerRow, body: z.output<typeof Hello>, instance: string | null): Promise<HelloAnswer> {
  if (body.protocol !== RUNNER_PROTOCOL) {
    throw conflict(
      `incompatible runner: svc ${body.version} speaks runner protocol ${body.protocol}, this server (svc ${VERSION}) speaks protocol ${RUNNER_PROTOCOL}: run svc ${VERSION} as the runner (its download is at /download on this server)`,
    );
  }
  const t = nowIso();
  const next = {
    // `svc runner --name` (SVC_RUNNER_NAME) names the runner everywhere: the API, the web app, its runs, the logs.
    ...(body.name !== undefined ? { name: body.name } : {}),
    version: body.version,
    capabilities: JSON.stringify({ browser: body.capabilities.browser }),
    advertised_labels: JSON.stringify([...new Set(body.labels)].sort()),
    last_seen_at: t,
    updated_at: t,
  };
  const leaseMs = core.config.runner.lease_ms;
  if (!(await store.takeRunnerToken(core.db, row.id, instance, new Date(Date.now() - leaseMs).toISOString(), next))) {
    // Read again: the holder's last word is what says how long the token stays taken.
    const holder = (await store.findRunner(core.db, row.id)) ?? row;
    const heardAgoMs = holder.last_seen_at === null ? 0 : Math.max(0, Date.now() - Date.parse(holder.last_seen_at));
    throw new TokenInUse(
      `another svc runner process holds the token of runner "${row.name}" (${row.id}), last heard from ${Math.round(heardAgoMs / 1000)} s ago: give every runner process its own token (svc admin create-runner-token --name …); this one waits until the other stops (its lease, ${Math.round(leaseMs / 1000)} s, after its last word)`,
      Math.max(1, Math.ceil((leaseMs - heardAgoMs) / 1000)),
    );
  }
  log.info("runner said hello", { runner_id: row.id, name: body.name ?? row.name, version: body.version, browser: body.capabilities.browser });
  if (body.name !== undefined && body.name !== row.name) log.info("runner renamed by its process", { runner_id: row.id, from: row.name, to: body.name });
  return answerHello(core, { ...row, ...next, instance_id: instance });
}

/** A hello while another process holds the token: a 409 that says when to ask again (Retry-After). */
export class TokenInUse extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super("conflict", message, [{ path: "header.x-svc-runner-instance", message: "another runner process holds this token" }]);
  }
}

/**
 * A request of a process that no longer holds the runner's token (another one said hello after its own went
 * unheard for a lease): refused, so two processes never work under one token.
 */
export function assertHoldsToken(row: RunnerRow, instance: string | null): void {
  if (instance === null || row.instance_id === null || row.instance_id === instance) return;
  throw new AppError(
    "conflict",
    `another svc runner process took the token of runner "${row.name}" (${row.id}) after this one went unheard for a lease: this one stops; give every runner process its own token (svc admin create-runner-token --name …)`,
    [{ path: "header.x-svc-runner-instance", message: "another runner process holds this token" }],
  );
}

/** The process stops (SIGTERM): its token is free for the next process at once, not a lease later. */
export async function goodbye(core: Core, row: RunnerRow, instance: string | null): Promise<{ ok: true }> {
  if (instance !== null) await store.letGoOfRunnerToken(core.db, row.id, instance);
  return { ok: true };
}

function assertHelloSaid(row: RunnerRow): void {
  if (row.version === null) throw conflict("the runner has not said hello yet: POST /api/v1/runner/hello first");
}

/** The runner as stored now, unless its token was revoked meanwhile (a long wait must notice a revocation). */
export async function currentRunner(core: Core, runner: RunnerRow): Promise<RunnerRow> {
  const row = await store.findRunner(core.db, runner.id);
  if (!row || row.revoked_at !== null) throw new AppError("unauthorized", "the runner's token was revoked");
  return row;
}

/** Notes that the runner was heard from (shown as last seen). */
export async function seen(core: Core, row: RunnerRow): Promise<void> {
  const t = nowIso();
  await store.updateRunner(core.db, row.id, { last_seen_at: t });
}

const leaseEnd = (core: Core) => new Date(Date.now() + core.config.runner.lease_ms).toISOString();

/** Claims up to `slots` runs the runner may take; each comes with its spec and environment (secrets included). */
export async function claimForRunner(core: Core, row: RunnerRow, slots: number): Promise<ClaimedJob[]> {
  assertHelloSaid(row);
  const { runs, environments } = await core.queue.claimRunsForRunner(
    nowIso(),
    {
      runnerId: row.id,
      leaseExpiresAt: leaseEnd(core),
      workspaceId: row.workspace_id,
      labels: runnerLabels(row),
      browser: runnerBrowser(row) === true,
    },
    slots,
  );
  if (runs.length === 0) return [];
  const envs = new Map<string, RunEnvironment>();
  for (const [id, e] of environments) envs.set(id, runEnvironment(core, e));
  log.info("runs claimed by runner", { runner_id: row.id, runs: runs.length });
  // Per-run variables and one-run secrets go with the run, as to this server's own engine.
  return (await withRunRequests(core, runs, envs)).map(({ row: r, environment }) => {
    const prior = priorAttempts(r.attempts);
    return {
      id: r.id,
      claim: r.claim,
      automation_id: r.automation_id,
      automation_name: r.automation_name,
      spec_text: r.spec,
      environment_id: r.environment_id,
      environment,
      ...(prior.length > 0 ? { prior_attempts: prior } : {}),
    };
  });
}

type RunRef = { id: string; claim: number };

/** Marks the runs the runner begins executing; answers those still its own (a cancelled one is not begun). */
export async function startForRunner(core: Core, row: RunnerRow, runs: RunRef[]): Promise<{ started: { id: string; started_at: string }[] }> {
  const t = nowIso();
  const started: { id: string; started_at: string }[] = [];
  for (const r of runs) {
    if (await store.beginRunnerRun(core.db, row.id, r, t, leaseEnd(core))) started.push({ id: r.id, started_at: t });
  }
  return { started };
}

/** Extends the leases of the runs the runner names, keeps their progress, and tells which it must stop. */
export async function heartbeatForRunner(
  core: Core,
  row: RunnerRow,
  runs: (RunRef & { progress?: { steps: unknown[]; summary: { steps: number; passed: number; failed: number; skipped: number }; attempts: unknown[] } })[],
): Promise<HeartbeatAnswer> {
  // Only the runs it names: a run it claimed and then lost track of goes back to the queue when its lease ends.
  for (const r of runs) {
    await store.extendRunnerLease(core.db, row.id, r, leaseEnd(core));
  }
  await seen(core, row);
  for (const r of runs) {
    if (!r.progress) continue;
    const { steps, summary, attempts } = r.progress;
    await recordRunProgress(core, r, { resultsJson: JSON.stringify({ steps, artifacts: [] }), summary, attempts: attempts as never });
  }
  return runStates(core, row, runs);
}

/** Of the runs the runner says it holds: those cancelled, and those no longer its own. */
export async function runStates(core: Core, row: RunnerRow, runs: RunRef[]): Promise<HeartbeatAnswer> {
  if (runs.length === 0) return { cancelled: [], lost: [] };
  const { cancelled, takenBack } = await runsStoppedElsewhere(core, runs, row.id);
  return { cancelled, lost: takenBack };
}

/** Records finished runs; only those still held by this runner under the same claim are taken. */
export async function finishForRunner(core: Core, row: RunnerRow, runs: z.output<typeof Finish>["runs"]): Promise<{ recorded: string[] }> {
  if (runs.length === 0) return { recorded: [] };
  const held = await store.runsHeldBy(
    core.db,
    row.id,
    runs.map((r) => r.id),
  );
  const byId = new Map(held.map((h) => [h.id, h]));
  const finished = Date.now();
  const outcomes = [];
  for (const r of runs) {
    const h = byId.get(r.id);
    if (!h || h.claim !== r.claim || (h.status !== "running" && h.status !== "cancelled")) continue;
    const startedAt = h.started_at ?? new Date(finished).toISOString();
    outcomes.push({
      id: r.id,
      claim: r.claim,
      automationId: h.automation_id,
      status: r.result.status,
      startedAt,
      finishedAt: new Date(finished).toISOString(),
      durationMs: Math.max(0, finished - Date.parse(startedAt)),
      error: r.result.error,
      ...(r.result.failure ? { failure: r.result.failure } : {}),
      summary: r.result.summary,
      resultsJson: JSON.stringify({ steps: r.result.steps, artifacts: r.result.artifacts }),
      attempts: r.result.attempts,
    });
  }
  await finishRuns(core, outcomes);
  await seen(core, row);
  for (const o of outcomes) {
    // As the server's own engine logs them: the error, or the first failed step, masked by the runner already.
    log.info("run finished", {
      run_id: o.id,
      automation_id: o.automationId,
      status: o.status,
      duration_ms: o.durationMs,
      ...(o.error !== null ? { error: o.error } : {}),
      ...(o.failure ? { failure: o.failure } : {}),
      runner_id: row.id,
    });
  }
  return { recorded: outcomes.map((o) => o.id) };
}

/**
 * The runner is stopping: runs it claimed but had not begun go back to the queue; runs it began and stopped at the
 * end of its grace period are handed back as a lost runner's are at its lease's end, at once — their execution kept
 * as an attempt that ended `error` ("runner stopped: …"), queued again while the automation's retries allow, else
 * ended. A routine stop (an upgrade, systemd) costs a run no more than a crash does.
 */
export async function releaseForRunner(core: Core, row: RunnerRow, runs: RunRef[]): Promise<{ released: string[] }> {
  const released: string[] = [];
  const t = nowIso();
  const handedBack = await core.db.transaction().execute(async (trx) => {
    const out = { requeued: [] as string[], lost: [] as string[], ended: [] as Record<string, unknown>[], alerts: 0 };
    for (const r of runs) {
      if (await store.releaseUnbegunRun(trx, row.id, r, t)) {
        released.push(r.id);
        continue;
      }
      const begun = await store.begunRunHeldBy(trx, row.id, r);
      if (!begun) continue;
      const error = `${STOPPED_MESSAGE}: the svc runner process of runner "${begun.runner_name ?? row.name}" was stopped before the run ended`;
      const ended = await loseRun(trx, begun, error, t);
      released.push(r.id);
      if (ended) {
        out.lost.push(r.id);
        out.ended.push(ended);
      } else out.requeued.push(r.id);
    }
    out.alerts = out.lost.length > 0 ? await recordEndedRuns(core, trx, out.lost, t) : 0;
    return out;
  });
  if (released.length > 0) core.events.emit("runQueued");
  if (handedBack.lost.length > 0) {
    for (const line of handedBack.ended) log.info("run finished", line);
    await runsEndedElsewhere(core, handedBack.lost, handedBack.alerts);
  }
  return { released };
}

export const STOPPED_MESSAGE = "runner stopped";

type LeasedRun = NonNullable<Awaited<ReturnType<typeof store.begunRunHeldBy>>>;

/**
 * A begun run its runner lost (its lease expired, or its process stopped): its execution is kept as an attempt that
 * ended `error`, and the run is queued again while the automation's retries allow (answers null), else ended
 * `error` (answers its "run finished" log line). The claim moves on with the next one, so the lost runner can
 * never finish it.
 */
async function loseRun(trx: Kysely<DB>, r: LeasedRun, error: string, t: string): Promise<Record<string, unknown> | null> {
  const retries = readJsonColumnOr(RunSpecColumn, r.spec, null)?.retries ?? 0;
  // The attempts before the lost one: from the runner's last progress, or those made before its claim.
  const before = priorAttempts(r.attempts);
  const lostAttempt: RunAttempt = {
    attempt: before.length + 1,
    status: "error",
    error,
    message: error,
    // Since the runner began the run: its own earlier attempts included, when it had retried already.
    duration_ms: Math.max(0, Date.parse(t) - Date.parse(r.runner_started_at ?? t)),
  };
  const attempts = JSON.stringify([...before, lostAttempt]);
  if (lostAttempt.attempt < retries + 1) {
    await store.updateExpiredRun(trx, r.id, r.lease_expires_at, {
      status: "queued",
      started_at: null,
      runner_id: null,
      lease_expires_at: null,
      runner_started_at: null,
      runner_losses: r.runner_losses + 1,
      results: "{}",
      attempts,
      updated_at: t,
    });
    return null;
  }
  const duration = r.started_at ? Math.max(0, Date.parse(t) - Date.parse(r.started_at)) : null;
  await store.updateExpiredRun(trx, r.id, r.lease_expires_at, {
    status: "error",
    error,
    attempts,
    finished_at: t,
    updated_at: t,
    lease_expires_at: null,
    duration_ms: duration,
  });
  await markLastRunErrored(trx, r.automation_id, r.id, t);
  return { run_id: r.id, automation_id: r.automation_id, status: "error", duration_ms: duration, error, runner_id: r.runner_id };
}

/** Keeps an artifact of a run the runner holds under `claim`, no larger than a screenshot may be. */
export async function saveRunnerArtifact(core: Core, row: RunnerRow, runId: string, claim: number, file: string, bytes: Uint8Array): Promise<void> {
  if (!ARTIFACT_NAME.test(file) || file.includes(".."))
    throw invalid(`"${file}" is not an artifact name`, [{ path: "file", message: "letters, digits, '.', '_', '-'" }]);
  // What it may be (a screenshot) is checked as it is kept (saveRunArtifact), after the claim.
  if (bytes.byteLength > RUNNER_ARTIFACT_MAX_BYTES) throw new AppError("payload_too_large", `an artifact is at most ${RUNNER_ARTIFACT_MAX_BYTES} bytes`);
  if (!(await store.runnerHoldsRun(core.db, row.id, { id: runId, claim }, ["running", "cancelled"]))) throw notFound("run");
  await saveRunArtifact(core, runId, file, bytes);
}

/**
 * Ends the leases that expired: a run its runner had not begun goes back to `queued`; a begun one keeps an attempt
 * that ended `error` ("runner lost: …") and is queued again while the automation's retries allow (the next runner
 * goes on from the attempts made), else ends `error`. The claim moves on with the next claim, so the lost runner can
 * never finish it.
 */
export async function sweepExpiredLeases(core: Core): Promise<{ requeued: string[]; lost: string[] }> {
  const t = nowIso();
  const result = await core.db.transaction().execute(async (trx) => {
    const expired = await store.runsWithExpiredLeases(trx, t);
    const requeued: string[] = [];
    const lost: string[] = [];
    /** The "run finished" line of each lost run, written once the transaction is in (as every ended run has one). */
    const ended: Record<string, unknown>[] = [];
    for (const r of expired) {
      if (r.runner_started_at === null) {
        await store.updateExpiredRun(trx, r.id, r.lease_expires_at, {
          status: "queued",
          started_at: null,
          runner_id: null,
          lease_expires_at: null,
          results: "{}",
          updated_at: t,
        });
        requeued.push(r.id);
        continue;
      }
      const error = `${LOST_MESSAGE}: runner "${r.runner_name ?? "?"}" stopped heart-beating and its lease expired at ${r.lease_expires_at}`;
      const line = await loseRun(trx, r, error, t);
      if (line === null) requeued.push(r.id);
      else {
        lost.push(r.id);
        ended.push(line);
      }
    }
    // A lost run is a state change like any other: its alerts are written with it.
    const alerts = lost.length > 0 ? await recordEndedRuns(core, trx, lost, t) : 0;
    return { requeued, lost, alerts, ended };
  });
  if (result.requeued.length > 0) {
    log.warn("runs of a lost runner queued again", { runs: result.requeued.length, run_ids: result.requeued });
    core.events.emit("runQueued");
  }
  if (result.lost.length > 0) {
    for (const line of result.ended) log.info("run finished", line);
    log.warn("runs of a lost runner ended as error", { runs: result.lost.length, run_ids: result.lost });
    await runsEndedElsewhere(core, result.lost, result.alerts);
  }
  return { requeued: result.requeued, lost: result.lost };
}
