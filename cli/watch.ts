// `--watch` and `svc runs watch`: live progress (a spinner on a TTY, plain lines otherwise) until a final status.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import type { ApiClient } from "../src/client/api-client";
import { isSuccessfulStatus, type WaitOptions, waitForGeneration, waitForGroupRun, waitForRun } from "../src/client/wait";
import type { WatchKind } from "../src/manifest/define";
import { ops } from "../src/manifest/index";
import { UsageError } from "./usage";
import { jsonAsReceived, paint, printableData, renderFailures, renderJson, runStatusText, type Style, styleFor } from "./output";
import { clientFor, EXIT, runCommand, settingsFor } from "./session";

type Rec = Record<string, unknown>;

/** The option of every command that follows a run, group run or generation to its end. */
export const WATCH_TIMEOUT_FLAGS = "--watch-timeout <duration>";
export const WATCH_TIMEOUT_HELP = "follow it (as --watch) for at most DURATION (90s, 15m, 2h; seconds when bare), then exit 7; it goes on on the server";

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** `--watch-timeout`'s duration in ms, or null when it was not given. */
export function parseWatchTimeout(text: string | undefined): number | null {
  if (text === undefined) return null;
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(text.trim());
  const ms = m ? Number(m[1]) * (UNIT_MS[m[2] ?? "s"] as number) : Number.NaN;
  if (!(ms >= 1000)) throw new UsageError(`--watch-timeout takes a duration of at least 1s, such as 90s, 15m or 2h (not "${text}")`);
  return ms;
}

/**
 * Makes sure a report or answer can be written to `file` before anything starts: its folder is made if missing (a
 * CI job writing `reports/junit.xml` into a fresh checkout); a folder in its place, or one that cannot be made, is a
 * usage error (exit 2) — never a finished run whose results are lost and whose job fails as if it had.
 */
export function prepareOutputFile(file: string, what: string): void {
  const path = resolve(file);
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    throw new UsageError(`cannot write ${what} to ${file}: ${(e as Error).message}`);
  }
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {}
  if (isDirectory) throw new UsageError(`cannot write ${what} to ${file}: it is a folder`);
}

/** How a watch ends: the final record as JSON (--json), a JUnit report (--junit), a time limit (--watch-timeout). */
export interface WatchOptions {
  json?: boolean;
  junit?: string;
  timeout?: string;
}

/** How long one read of a watch may be held by the server: the progress line is redrawn at least this often. */
const WATCH_PROGRESS_SECONDS = 5;

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** One line saying where a record is: status and, when known, how far along. */
export function progressLine(kind: WatchKind, record: Rec, style: Style): string {
  const r = printableData(record) as Rec;
  // A queued run nothing connected can take says what it waits for (a runner with some labels, say).
  const waiting = typeof r.waiting_for === "string" ? ` — ${r.waiting_for}` : "";
  return progressOf(kind, r, style) + waiting;
}

function progressOf(kind: WatchKind, r: Rec, style: Style): string {
  const status = paint(String(r.status), String(r.status), style);
  const id = String(r.id);
  if (kind === "generation") {
    const p = r.progress as { stage: string; done: number; total: number } | undefined;
    return `generation ${id} ${status}${p ? ` (${p.stage} ${p.done}/${p.total})` : ""}`;
  }
  const s = r.summary as Rec | undefined;
  if (kind === "group_run" && s) {
    const done = Number(s.total) - Number(s.queued) - Number(s.running);
    return `group run ${id} ${status} (${done}/${s.total} runs done, ${s.passed} passed${Number(s.flaky) > 0 ? `, ${s.flaky} of them flaky` : ""})`;
  }
  const steps = s && Number(s.steps) > 0 ? ` (${Number(s.passed) + Number(s.failed) + Number(s.skipped)}/${s.steps} steps, ${s.failed} failed)` : "";
  return `run ${id} ${runStatusText(r, style)}${steps}`;
}

/** Draws progress on stderr; on a TTY the line is redrawn in place with a spinner. */
class ProgressView {
  private frame = 0;
  private line = "";
  private lastPrinted = "";
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly kind: WatchKind,
    private readonly style: Style,
  ) {
    if (style.tty) this.timer = setInterval(() => this.draw(), 100);
  }

  update(r: Rec): void {
    this.line = progressLine(this.kind, r, this.style);
    if (this.style.tty) this.draw();
    else if (this.line !== this.lastPrinted) {
      process.stderr.write(`${this.line}\n`);
      this.lastPrinted = this.line;
    }
  }

  private draw(): void {
    if (!this.line) return;
    this.frame = (this.frame + 1) % FRAMES.length;
    process.stderr.write(`\r\x1b[K${FRAMES[this.frame]} ${this.line}`);
  }

  /** Stops the spinner; also on failure, or its timer would keep the process alive. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  finish(r: Rec): void {
    this.stop();
    const status = String(r.status);
    const mark = isSuccessfulStatus(status) ? "✓" : "✗";
    const ms = r.duration_ms;
    const took = typeof ms === "number" ? ` in ${ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`}` : "";
    const final = `${this.style.tty ? `${paint(mark, status, this.style)} ` : ""}${progressLine(this.kind, r, this.style)}${took}`;
    process.stderr.write(this.style.tty ? `\r\x1b[K${final}\n` : `${final}\n`);
  }
}

/**
 * Writes the JUnit XML report of a run or group run to `file`: once it has ended (also when it failed: that is the
 * point), or when the watch stops before the end, with what is known then (the server reports unfinished runs as
 * skipped), so the CI shows the checks that did finish.
 */
async function writeJunit(client: ApiClient, kind: WatchKind, project: string, record: Rec, file: string): Promise<void> {
  const id = String(record.id);
  const res =
    kind === "run"
      ? await client.send(ops.getRunJunit, { project, runId: id })
      : kind === "group_run"
        ? await client.send(ops.getGroupRunJunit, { project, groupRunId: id })
        : null;
  if (!res?.raw) throw new UsageError("--junit goes with a run or a group run");
  writeFileSync(file, res.raw.bytes);
  process.stderr.write(`wrote the JUnit report to ${file}${unfinishedNote(kind, record)}\n`);
}

const isUnfinished = (status: unknown) => status === "queued" || status === "running";

/** " with N runs unfinished (…)" for a report written before the end, from the record it was written after; else "". */
function unfinishedNote(kind: WatchKind, r: Rec): string {
  const s = r.summary as Rec | undefined;
  const unfinished = kind === "group_run" && s ? Number(s.queued) + Number(s.running) : isUnfinished(r.status) ? 1 : 0;
  if (unfinished === 0) return "";
  // A sequential group run queues its automations one at a time: those not queued yet have no run to report.
  const notQueued = kind === "group_run" && s && Array.isArray(r.runs) ? Number(s.total) - r.runs.length : 0;
  const apart = notQueued > 0 ? `; ${notQueued} of them not queued yet` : "";
  return ` with ${unfinished} ${unfinished === 1 ? "run" : "runs"} unfinished (reported as skipped${apart})`;
}

/** The exit codes of the signals a watch that owes a report stops on: Ctrl+C, and a CI cancelling its job. */
const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Catches Ctrl+C (and SIGTERM) while a report is due: the watch stops (`signal` aborts its read) to write what is
 * known. A second signal exits at once, and `release` gives the signals back as soon as no report is owed.
 */
function catchStopSignals(): { signal: AbortSignal; exitCode: () => number | null; release: () => void } {
  const controller = new AbortController();
  let exitCode: number | null = null;
  const handlers = Object.entries(STOP_SIGNALS).map(([name, code]) => {
    const handler = () => {
      if (exitCode !== null) process.exit(exitCode);
      exitCode = code;
      controller.abort();
    };
    process.on(name, handler);
    return [name, handler] as const;
  });
  const release = () => {
    for (const [name, handler] of handlers) process.off(name, handler);
  };
  return { signal: controller.signal, exitCode: () => exitCode, release };
}

/** Reads a run, group run or generation until it ends, or until the time limit or the signal. */
async function follow(
  client: ApiClient,
  kind: WatchKind,
  started: Rec,
  target: { project: string; feature?: string },
  opts: WaitOptions<Rec>,
): Promise<{ record: Rec; body: string; timedOut: boolean }> {
  if (kind === "run") return waitForRun(client, { project: target.project, runId: String(started.id) }, opts);
  if (kind === "group_run") return waitForGroupRun(client, { project: target.project, groupRunId: String(started.id) }, opts);
  if (!target.feature) throw new UsageError("a feature is needed to watch its generation");
  return waitForGeneration(client, { project: target.project, feature: target.feature }, opts);
}

/** Follows a started run, group run or generation to its end; prints the final record; 0 when it passed. */
export async function watchToEnd(
  client: ApiClient,
  kind: WatchKind,
  started: Rec,
  target: { project: string; feature?: string },
  options: WatchOptions = {},
): Promise<number> {
  const asJson = options.json === true;
  const junitFile = options.junit;
  const timeoutMs = parseWatchTimeout(options.timeout);
  if (junitFile) prepareOutputFile(junitFile, "the JUnit report");
  const view = new ProgressView(kind, styleFor(process.stderr));
  // A report is owed to the CI: an interrupted watch writes what is known before it exits.
  const stop = junitFile && kind !== "generation" ? catchStopSignals() : null;
  // Each read is held by the server until the end, or for a few seconds to show progress meanwhile.
  const opts = { onUpdate: (r: Rec) => view.update(r), longPollSeconds: WATCH_PROGRESS_SECONDS, timeoutMs, signal: stop?.signal };
  view.update(started);
  const done = await follow(client, kind, started, target, opts).catch((e: unknown) => {
    // A signal aborts the read under way: not a failure of the watch but its end, with the report still owed.
    if (stop?.exitCode()) return null;
    view.stop();
    if (styleFor(process.stderr).tty) process.stderr.write("\n");
    stop?.release();
    throw e;
  });
  const signalled = stop?.exitCode() ?? null;
  if (done === null || signalled !== null) {
    view.stop();
    if (styleFor(process.stderr).tty) process.stderr.write("\n");
    try {
      return await stoppedBySignal(client, kind, started, target.project, options, signalled ?? STOP_SIGNALS.SIGINT);
    } finally {
      stop?.release();
    }
  }
  stop?.release();
  const final = done.record;
  if (done.timedOut) return gaveUp(client, view, kind, final, done.body, target.project, options);
  view.finish(final);
  if (junitFile) {
    if (final.status === "cancelled") await stoppedStepsRecorded(client, kind, target.project, final);
    await writeJunit(client, kind, target.project, final, junitFile);
  }
  // --json: the final record exactly as the server sent it; the list of failures, for people, goes to stderr.
  if (asJson) {
    process.stdout.write(jsonAsReceived(done.body));
    const failures = await failuresOf(client, kind, target.project, final, styleFor(process.stderr));
    if (failures) process.stderr.write(`${failures}\n`);
  } else {
    const style = styleFor(process.stdout);
    // A run's record view ends with its failures already; a group run's runs are read in full for theirs.
    const failures = kind === "group_run" ? await failuresOf(client, kind, target.project, final, style) : "";
    process.stdout.write(`${renderJson(final, kind, style)}\n${failures ? `\n${failures}\n` : ""}`);
  }
  // A quarantined automation's failure is reported, but does not fail the command; a cancelled run is no failure of
  // its automation, so quarantine does not excuse it (as in a group run, whose cancel fails the command).
  return isSuccessfulStatus(String(final.status)) || (final.quarantined === true && QUARANTINE_EXCUSES.has(String(final.status))) ? EXIT.ok : EXIT.failed;
}

/** What quarantine sets apart: an automation's own failure (docs/cli.md, "a failed, errored or timed-out run"). */
const QUARANTINE_EXCUSES = new Set(["failed", "error", "timed_out"]);

/** A run cancelled while it ran ends at once; the steps it had reached are written a moment later, by whatever
 * executed it. Read again for up to STOPPED_STEPS_WAIT_MS so the report shows them. */
const STOPPED_STEPS_WAIT_MS = 2000;

async function stoppedStepsRecorded(client: ApiClient, kind: WatchKind, project: string, record: Rec): Promise<void> {
  const pending = (r: Rec) => {
    const runs = kind === "run" ? [r] : Array.isArray(r.runs) ? (r.runs as Rec[]) : [];
    return runs.some((x) => x.status === "cancelled" && x.started_at !== null && Number((x.summary as Rec | undefined)?.steps ?? 0) === 0);
  };
  const id = String(record.id);
  for (let now = record, waited = 0; pending(now) && waited < STOPPED_STEPS_WAIT_MS; waited += 200) {
    await Bun.sleep(200);
    const res = kind === "run" ? await client.send(ops.getRun, { project, runId: id }) : await client.send(ops.getGroupRun, { project, groupRunId: id });
    now = res.json as Rec;
  }
}

/** --watch-timeout passed: where the record stands, the report of what is known (--junit), its JSON (--json); exit 7. */
async function gaveUp(
  client: ApiClient,
  view: ProgressView,
  kind: WatchKind,
  last: Rec,
  body: string,
  project: string,
  options: WatchOptions,
): Promise<number> {
  // The spinner's timer would keep the process alive on a terminal.
  view.stop();
  const style = styleFor(process.stderr);
  if (style.tty) process.stderr.write("\n");
  process.stderr.write(`svc: stopped following after --watch-timeout ${options.timeout}: ${progressLine(kind, last, style)}; it goes on on the server\n`);
  if (options.junit) await writeJunit(client, kind, project, last, options.junit);
  if (options.json) process.stdout.write(jsonAsReceived(body));
  return EXIT.watchTimeout;
}

/** Interrupted while a report is owed: where the record stands now, the report of what is known, its JSON (--json). */
async function stoppedBySignal(client: ApiClient, kind: WatchKind, started: Rec, project: string, options: WatchOptions, exitCode: number): Promise<number> {
  const id = String(started.id);
  // The last progress read may be seconds old (reads are held): the report and the line say where it is now.
  const res = kind === "run" ? await client.send(ops.getRun, { project, runId: id }) : await client.send(ops.getGroupRun, { project, groupRunId: id });
  const now = res.json as Rec;
  const goesOn = isUnfinished(now.status) ? "; it goes on on the server" : "";
  process.stderr.write(`svc: interrupted: ${progressLine(kind, now, styleFor(process.stderr))}${goesOn}\n`);
  if (options.junit) await writeJunit(client, kind, project, now, options.junit);
  if (options.json) process.stdout.write(jsonAsReceived(res.text, res.json));
  return exitCode;
}

/** The numbered failures of a finished run or group run (each failed run of a group read with its steps). */
async function failuresOf(client: ApiClient, kind: WatchKind, project: string, final: Rec, style: Style): Promise<string> {
  if (kind === "run") return renderFailures([final], style);
  if (kind !== "group_run" || !Array.isArray(final.runs)) return "";
  const runs: Rec[] = [];
  for (const r of final.runs as Rec[]) {
    runs.push(isSuccessfulStatus(String(r.status)) ? r : await client.call("getRun", { project, runId: String(r.id) }));
  }
  return renderFailures(runs, style);
}

interface WatchCommandFlags {
  project?: string;
  server?: string;
  json?: boolean;
  junit?: string;
  watchTimeout?: string;
}

/** The options of `svc runs watch` and `svc group-runs watch`. */
function watchCommand(parent: Command, what: "run" | "group run", argument: string): Command {
  return parent
    .command("watch")
    .description(`Follow a ${what} until it ends (one started elsewhere: by a schedule, the web app, another job); exit 0 when it passed, 1 otherwise`)
    .argument(`<${argument}>`, what === "run" ? "Run id (run_…)" : "Group run id (grn_…)")
    .option("--project <project>", "project id or slug (default: SVC_PROJECT or .svc.json)")
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)")
    .option("--json", `print the final ${what} as the API's JSON exactly`)
    .option("--junit <file>", `write the ${what}'s JUnit XML report to FILE when it ends, for the CI to read`)
    .option(WATCH_TIMEOUT_FLAGS, WATCH_TIMEOUT_HELP);
}

function projectOf(o: WatchCommandFlags) {
  const settings = settingsFor(o);
  if (!settings.project) throw new UsageError('no project: pass --project, set SVC_PROJECT, or add "project" to .svc.json');
  return { settings, project: settings.project.value };
}

/** What `watch` follows under each command: its record's kind, its id's argument, and how the record is read. */
const WATCHED = {
  run: { kind: "run", id: "runId", read: (client: ApiClient, project: string, runId: string) => client.call("getRun", { project, runId }) },
  "group run": {
    kind: "group_run",
    id: "groupRunId",
    read: (client: ApiClient, project: string, groupRunId: string) => client.call("getGroupRun", { project, groupRunId }),
  },
} as const;

/**
 * `svc runs watch <runId>` and `svc group-runs watch <groupRunId>`: follow a run or group run started elsewhere (a
 * schedule's, the web app's, another job's).
 */
export function registerWatch(parent: Command, what: keyof typeof WATCHED): void {
  const { kind, id, read } = WATCHED[what];
  watchCommand(parent, what, id).action((recordId: string, o: WatchCommandFlags) =>
    runCommand(async () => {
      const { settings, project } = projectOf(o);
      parseWatchTimeout(o.watchTimeout);
      if (o.junit) prepareOutputFile(o.junit, "the JUnit report");
      const client = clientFor(settings);
      const record = await read(client, project, recordId);
      return watchToEnd(client, kind, record, { project }, { json: o.json, junit: o.junit, timeout: o.watchTimeout });
    }),
  );
}
