// Alert state and the outbox. The state of each subject (an automation in an environment, a group in an
// environment, a schedule) moves with every finished run; a change of state — and, with `remind_every`, a failure
// that lasts — becomes one delivery row per channel that wants the event, written in the caller's transaction
// (the one that finished the run), so an alert is neither lost nor sent for a change that did not commit.
import type { Kysely, Selectable } from "kysely";
import type { AlertChannelTable, DB } from "../../db/schema";
import { newId } from "../../security/ids";
import { configuredAddress } from "../address";
import type { Core } from "../context";
import { passedAfterRetry } from "../history/operations";
import { setApart } from "../../manifest/records";
import { deriveGroupStatus } from "../runs/operations";
import { StringList } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import type { FinishedRun } from "../storage";
import * as store from "./store";

export const ALERT_EVENTS = ["failing", "recovered", "flaky", "schedule_failed"] as const;
export type AlertEvent = (typeof ALERT_EVENTS)[number] | "test";
type State = "passing" | "failing" | "flaky";
type ChannelRow = Selectable<AlertChannelTable>;

/** What an alert is about, as the webhook body names it. */
export interface Subject {
  key: string;
  projectId: string;
  kind: "automation" | "group" | "schedule";
  id: string;
  name: string;
  environmentId: string | null;
}

/** The run (or group run) that moved the state. */
export interface RunRef {
  id: string;
  status: string;
  kind: "run" | "group_run";
  /** The runner (svc runner) that executed the run, if one did. */
  runnerId?: string | null;
}

/** A finished run's status as alert state: cancelled says nothing about the product. */
export function stateOf(status: string, flaky: boolean): State | null {
  if (status === "passed") return flaky ? "flaky" : "passing";
  if (status === "failed" || status === "error" || status === "timed_out") return "failing";
  return null;
}

/**
 * The events a move from `prev` to `next` raises: failing once when it starts failing, recovered once when it
 * passes again, flaky once when it starts passing only after retries. Unknown (no state yet) counts as passing.
 */
export function eventsFor(prev: State | null, next: State): (typeof ALERT_EVENTS)[number][] {
  if (next === "failing") return prev === "failing" ? [] : ["failing"];
  if (prev === "failing") return ["recovered"];
  if (next === "flaky" && prev !== "flaky") return ["flaky"];
  return [];
}

/** Collects what one transaction raises, then writes it (channels read once per project). */
export class AlertRecorder {
  private readonly channels = new Map<string, ChannelRow[]>();
  private readonly projects = new Map<string, { id: string; slug: string; name: string } | null>();
  private readonly envNames = new Map<string, string | null>();
  private readonly runnerNames = new Map<string, string | null>();
  queued = 0;

  constructor(
    private readonly core: Core,
    private readonly db: Kysely<DB>,
    private readonly now: string,
  ) {}

  private async channelsOf(projectId: string): Promise<ChannelRow[]> {
    let list = this.channels.get(projectId);
    if (!list) {
      list = await store.channelsOfProject(this.db, projectId);
      this.channels.set(projectId, list);
    }
    return list;
  }

  /**
   * Moves a subject back to passing and raises nothing: a schedule that starts runs again only re-arms its
   * schedule_failed. Whether what it runs passes is the runs' own state, which alerts about them as they end: a
   * "recovered" here would say so before any of them has.
   */
  async rearm(subject: Subject): Promise<void> {
    const before = await store.readState(this.db, subject.key);
    if (before === undefined || before.state === "passing") return;
    await store.writeState(this.db, {
      subject_key: subject.key,
      project_id: subject.projectId,
      state: "passing",
      since: this.now,
      last_run_id: null,
      updated_at: this.now,
    });
  }

  /** Moves the subject's state and queues what the move raises. */
  async observe(subject: Subject, next: State, run: RunRef | null, failure?: { event: "schedule_failed"; error: string }): Promise<void> {
    const before = await store.readState(this.db, subject.key);
    const prev = (before?.state as State | undefined) ?? null;
    await store.writeState(this.db, {
      subject_key: subject.key,
      project_id: subject.projectId,
      state: next,
      since: prev === next && before ? before.since : this.now,
      last_run_id: run?.id ?? null,
      updated_at: this.now,
    });
    const channels = await this.channelsOf(subject.projectId);
    if (channels.length === 0) return;
    const raised = eventsFor(prev, next).map((e) => (e === "failing" && failure ? failure.event : e));
    const remind = raised.length === 0 && prev === "failing" && next === "failing";
    for (const channel of channels) {
      const wanted = readJsonColumnOr(StringList, channel.events, [...ALERT_EVENTS]);
      let events = raised.filter((e) => wanted.includes(e));
      if (remind && channel.remind_every !== null) {
        const event = failure ? failure.event : "failing";
        const last = await store.lastDeliveryAt(this.db, channel.id, subject.key);
        if (wanted.includes(event) && (last === null || Date.parse(this.now) - Date.parse(last) >= channel.remind_every * 1000)) events = [event];
      }
      // A schedule_failed is about a due time that started nothing, not a run's result: it has no previous status
      // (the state before would only say whether the schedule's last due time started its runs).
      for (const event of events) await this.queue(channel, subject, event, run, failure ? null : prev, failure?.error ?? null);
    }
  }

  /** Queues one delivery of `event` about `subject` to `channel`, its body fixed now (a retry sends the same bytes). */
  async queue(channel: ChannelRow, subject: Subject | null, event: AlertEvent, run: RunRef | null, prev: State | null, error: string | null): Promise<string> {
    const body = await this.body(channel, subject, event, run, prev, error);
    const id = newId("dlv");
    await store.insertDeliveries(this.db, [
      {
        id,
        channel_id: channel.id,
        project_id: channel.project_id,
        subject_key: subject?.key ?? "test",
        event,
        body: JSON.stringify(body),
        status: "pending",
        attempts: 0,
        status_code: null,
        error: null,
        next_attempt_at: this.now,
        delivered_at: null,
        created_at: this.now,
        updated_at: this.now,
      },
    ]);
    this.queued++;
    return id;
  }

  private async body(channel: ChannelRow, subject: Subject | null, event: AlertEvent, run: RunRef | null, prev: State | null, error: string | null) {
    const projectId = channel.project_id;
    if (!this.projects.has(projectId)) this.projects.set(projectId, (await store.projectBrief(this.db, projectId)) ?? null);
    const project = this.projects.get(projectId) ?? { id: projectId, slug: projectId, name: "" };
    const envId = subject?.environmentId ?? null;
    if (envId !== null && !this.envNames.has(envId)) this.envNames.set(envId, await store.environmentName(this.db, envId));
    const base = configuredAddress(this.core.config);
    const path = run?.kind === "group_run" ? "group-runs" : "runs";
    // Where the run ran, when a runner executed it: a check failing on one network only says which.
    const runnerId = run?.runnerId ?? null;
    if (runnerId !== null && !this.runnerNames.has(runnerId)) this.runnerNames.set(runnerId, await store.runnerName(this.db, runnerId));
    return {
      event,
      occurred_at: this.now,
      project: { id: project.id, slug: project.slug, name: project.name },
      ...(subject ? { [subject.kind]: { id: subject.id, name: subject.name } } : {}),
      environment: envId === null ? null : { id: envId, name: this.envNames.get(envId) ?? null },
      run: run
        ? {
            id: run.id,
            status: run.status,
            url: `${base}/#/p/${encodeURIComponent(project.slug)}/${path}/${run.id}`,
            runner: runnerId === null ? null : { id: runnerId, name: this.runnerNames.get(runnerId) ?? null },
          }
        : null,
      previous_status: prev,
      ...(error !== null ? { error } : {}),
      ...(event === "test" ? { channel: { id: channel.id, name: channel.name } } : {}),
    };
  }
}

/** What alerting needs of a run that ended. */
export type EndedRun = Pick<
  FinishedRun,
  | "id"
  | "project_id"
  | "automation_id"
  | "automation_name"
  | "group_run_id"
  | "environment_id"
  | "schedule_id"
  | "status"
  | "attempts"
  | "trigger"
  | "runner_id"
>;

/** As recordFinishedRuns, for runs ended by id elsewhere (a lost runner's or node's, a stopped sequence): they are read first. */
export async function recordEndedRuns(core: Core, db: Kysely<DB>, runIds: string[], now: string): Promise<number> {
  return recordFinishedRuns(core, db, await store.finishedRuns(db, runIds), now);
}

/**
 * Inside the transaction that finished `runs` (as the finishing statement returned them): moves the state of what
 * they were runs of. A run on its own moves its automation's state in its environment; a group run, once its last
 * run ends, moves its schedule's state (a scheduled group run) or its group's (in its environment). A batch
 * without group or schedule (a feature's) moves each automation's state.
 */
export async function recordFinishedRuns(core: Core, db: Kysely<DB>, runs: EndedRun[], now: string): Promise<number> {
  const recorder = new AlertRecorder(core, db, now);
  const groupRunIds = [...new Set(runs.map((r) => r.group_run_id).filter((id): id is string => id !== null))];
  const groupRuns = await store.groupRunHeads(db, groupRunIds);
  const batch = new Set(groupRuns.filter((g) => g.group_id === null && g.schedule_id === null).map((g) => g.id));
  for (const r of runs) {
    if (r.group_run_id !== null && !batch.has(r.group_run_id)) continue;
    // A test run (svc test) belongs to no saved automation: it moves no alert state.
    if (r.trigger === "test") continue;
    const next = stateOf(r.status, passedAfterRetry(r.status, r.attempts));
    if (next === null) continue;
    const subject: Subject = {
      key: `automation:${r.automation_id}:${r.environment_id ?? "-"}`,
      projectId: r.project_id,
      kind: "automation",
      id: r.automation_id,
      name: r.automation_name,
      environmentId: r.environment_id,
    };
    await recorder.observe(subject, next, { id: r.id, status: r.status, kind: "run", runnerId: r.runner_id });
  }
  for (const g of groupRuns) {
    if (batch.has(g.id)) continue;
    const of = await store.endedGroupRunMembers(db, g.id);
    if (of === null) continue;
    // The group run's own verdict: a quarantined automation's failure does not fail it, so it alerts no one either.
    const status = deriveGroupStatus(of.map((m) => (setApart({ status: m.status, quarantined: m.quarantined === 1 }) ? "passed" : m.status)));
    if (status === "queued" || status === "running") continue;
    const flaky = of.some((m) => passedAfterRetry(m.status, m.attempts));
    const next = stateOf(status, flaky);
    if (next === null) continue;
    const envs = [...new Set(of.map((m) => m.environment_id))];
    const env = envs.length === 1 ? (envs[0] ?? null) : null;
    const subject: Subject =
      g.schedule_id !== null
        ? {
            key: `schedule:${g.schedule_id}`,
            projectId: g.project_id,
            kind: "schedule",
            id: g.schedule_id,
            name: (await store.scheduleName(db, g.schedule_id)) ?? g.group_name,
            environmentId: env,
          }
        : { key: `group:${g.group_id}:${env ?? "-"}`, projectId: g.project_id, kind: "group", id: g.group_id ?? g.id, name: g.group_name, environmentId: env };
    await recorder.observe(subject, next, { id: g.id, status, kind: "group_run" });
  }
  return recorder.queued;
}
