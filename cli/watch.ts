// `--watch` and `svc runs watch`: live progress (a spinner on a TTY, plain lines otherwise) until a final status.
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import type { ApiClient } from "../src/client/api-client";
import { isSuccessfulStatus, waitForGeneration, waitForGroupRun, waitForRun } from "../src/client/wait";
import type { WatchKind } from "../src/manifest/define";
import { ops } from "../src/manifest/index";
import { UsageError } from "./usage";
import { jsonAsReceived, paint, renderFailures, renderJson, runStatusText, type Style, styleFor } from "./output";
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
export function progressLine(kind: WatchKind, r: Rec, style: Style): string {
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

/** Writes the JUnit XML report of a finished run or group run to `file` (also when it failed: that is the point). */
async function writeJunit(client: ApiClient, kind: WatchKind, project: string, id: string, file: string): Promise<void> {
  const res =
    kind === "run"
      ? await client.send(ops.getRunJunit, { project, runId: id })
      : kind === "group_run"
        ? await client.send(ops.getGroupRunJunit, { project, groupRunId: id })
        : null;
  if (!res?.raw) throw new UsageError("--junit goes with a run or a group run");
  writeFileSync(file, res.raw.bytes);
  process.stderr.write(`wrote the JUnit report to ${file}\n`);
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
  const view = new ProgressView(kind, styleFor(process.stderr));
  // Each read is held by the server until the end, or for a few seconds to show progress meanwhile.
  const opts = { onUpdate: (r: Rec) => view.update(r), longPollSeconds: WATCH_PROGRESS_SECONDS, timeoutMs };
  view.update(started);
  let done: { record: Rec; body: string; timedOut: boolean };
  try {
    if (kind === "run") done = await waitForRun(client, { project: target.project, runId: String(started.id) }, opts);
    else if (kind === "group_run") done = await waitForGroupRun(client, { project: target.project, groupRunId: String(started.id) }, opts);
    else {
      if (!target.feature) throw new UsageError("a feature is needed to watch its generation");
      done = await waitForGeneration(client, { project: target.project, feature: target.feature }, opts);
    }
  } catch (e) {
    view.stop();
    if (styleFor(process.stderr).tty) process.stderr.write("\n");
    throw e;
  }
  const final = done.record;
  if (done.timedOut) return gaveUp(kind, final, done.body, options);
  view.finish(final);
  if (junitFile) await writeJunit(client, kind, target.project, String(final.id), junitFile);
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
  // A quarantined automation's failure is reported, but does not fail the command.
  return isSuccessfulStatus(String(final.status)) || final.quarantined === true ? EXIT.ok : EXIT.failed;
}

/** --watch-timeout passed: where the record stands (and its JSON with --json); no report, since it has not ended. */
function gaveUp(kind: WatchKind, last: Rec, body: string, options: WatchOptions): number {
  const style = styleFor(process.stderr);
  if (style.tty) process.stderr.write("\n");
  process.stderr.write(`svc: stopped following after --watch-timeout ${options.timeout}: ${progressLine(kind, last, style)}; it goes on on the server\n`);
  if (options.junit) process.stderr.write(`no JUnit report written to ${options.junit}: it has not ended\n`);
  if (options.json) process.stdout.write(jsonAsReceived(body));
  return EXIT.watchTimeout;
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

/** `svc runs watch <runId>`: the one hand-written runs command. */
export function registerRunsWatch(runs: Command): void {
  runs
    .command("watch")
    .description("Follow a run until it ends; exit 0 when it passed, 1 otherwise")
    .argument("<runId>", "Run id (run_…)")
    .option("--project <project>", "project id or slug (default: SVC_PROJECT or .svc.json)")
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)")
    .option("--json", "print the final run as the API's JSON exactly")
    .option(WATCH_TIMEOUT_FLAGS, WATCH_TIMEOUT_HELP)
    .action((runId: string, o: { project?: string; server?: string; json?: boolean; watchTimeout?: string }) =>
      runCommand(async () => {
        const settings = settingsFor(o);
        if (!settings.project) throw new UsageError('no project: pass --project, set SVC_PROJECT, or add "project" to .svc.json');
        const client = clientFor(settings);
        const run = await client.call("getRun", { project: settings.project.value, runId });
        return watchToEnd(client, "run", run, { project: settings.project.value }, { json: o.json, timeout: o.watchTimeout });
      }),
    );
}
