// How the CLI prints: aligned tables and record views for people, status colours only on a TTY, NO_COLOR respected.
import { setApart } from "../src/manifest/records";

export interface Style {
  color: boolean;
  tty: boolean;
}

export function styleFor(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): Style {
  const tty = stream.isTTY === true;
  const color = tty && env.NO_COLOR === undefined && env.TERM !== "dumb";
  return { color, tty };
}

const GREEN = new Set(["passed", "succeeded", "active", "owner"]);
const RED = new Set(["failed", "error", "timed_out"]);
const YELLOW = new Set(["queued", "running", "draft", "flaky"]);
const DIM = new Set(["cancelled", "disabled", "skipped"]);

export function paint(text: string, status: string, style: Style): string {
  if (!style.color) return text;
  const code = GREEN.has(status) ? 32 : RED.has(status) ? 31 : YELLOW.has(status) ? 33 : DIM.has(status) ? 2 : 0;
  return code ? `\x1b[${code}m${text}\x1b[0m` : text;
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** A control character as the escape that names it: ESC is `\x1b`, a bidi override `\u202e` (as JSON and JS write them). */
const escapeOf = (c: string) => {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
};

/**
 * Text from the server made safe to write to a terminal: every control character (ESC, BEL, CSI, a carriage return
 * that overwrites the line) and bidi override is shown as its escape, never acted on; a name that was stored before
 * such names were refused reads `esc\x1b[2J…`. A multi-line field (a description, a message) keeps its newlines and
 * tabs, a CRLF read as a newline.
 */
export function printable(text: string, multiline = false): string {
  return multiline ? text.replace(/\r\n/g, "\n").replace(CONTROL_BUT_LINES, escapeOf) : text.replace(CONTROL, escapeOf);
}

/** The fields whose text has lines of its own; every other string is one line. */
const MULTILINE_FIELDS = new Set(["description", "acceptance_criteria", "message", "error", "last_error", "result", "reply", "text", "body", "suggestion"]);

/** Server data with every string (and key) made printable, before any of it is laid out for people. */
export function printableData(v: unknown, field = ""): unknown {
  if (typeof v === "string") return printable(v, MULTILINE_FIELDS.has(field));
  if (Array.isArray(v)) return v.map((x) => printableData(x, field));
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [printable(k), printableData(x, k)]));
  return v;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are control characters
const ANSI = /\x1b\[[0-9;]*m/g;
const width = (s: string) => s.replace(ANSI, "").length;

/** Columns aligned on the widest cell; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat((widths[i] ?? 0) - width(c))))
      .join("  ")
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join("\n");
}

function truncate(s: string, max: number): string {
  const one = s.replace(/\s+/g, " ");
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** On a terminal long text is cut to keep the table readable; in a log (not a TTY) nothing is cut. */
const fit = (s: string, max: number, style: Style) => (style.tty ? truncate(s, max) : s.replace(/\s*\n\s*/g, " "));

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

/** A run's status; a run that passed only after a failed attempt says so, and on which attempt it passed. */
export function runStatusText(run: Rec, style: Style): string {
  const status = String(run.status);
  const painted = paint(status, status, style);
  if (run.flaky !== true || !Array.isArray(run.attempts)) return painted;
  const of = typeof run.max_attempts === "number" ? run.max_attempts : run.attempts.length;
  return `${painted} (${paint("flaky", "flaky", style)}: attempt ${run.attempts.length} of ${of})`;
}

/** One cell or value, in words: counts for summaries, status for last runs, short JSON for the rest. */
export function formatValue(key: string, v: unknown, style: Style, max = 60): string {
  if (v === null || v === undefined) return "-";
  if (key === "status" && typeof v === "string") return paint(v, v, style);
  if ((key === "duration_ms" || key === "p50_ms" || key === "p95_ms") && typeof v === "number") return `${Math.round(v)} ms`;
  if (key === "pass_rate" && typeof v === "number") return `${Math.round(v * 1000) / 10}%`;
  if (key === "summary" && isRec(v)) {
    if (typeof v.steps === "number") return `${v.passed}/${v.steps} passed${Number(v.failed) ? `, ${v.failed} failed` : ""}`;
    if (typeof v.total === "number") {
      const parts = Object.entries(v)
        .filter(([k, n]) => k !== "total" && k !== "flaky" && Number(n) > 0)
        .map(([k, n]) => (k === "passed" && Number(v.flaky) > 0 ? `${n} passed (${v.flaky} flaky)` : `${n} ${k}`));
      return `${v.total} run${v.total === 1 ? "" : "s"}${parts.length ? `: ${parts.join(", ")}` : ""}`;
    }
  }
  if (key === "last_run" && isRec(v)) return `${paint(String(v.status), String(v.status), style)} (${v.id})`;
  if (key === "progress" && isRec(v)) return `${v.stage} ${v.done}/${v.total}`;
  if (key === "target" && isRec(v)) {
    // A schedule's target: what it runs.
    if (typeof v.automation === "string") return `automation ${v.automation}`;
    if (typeof v.group === "string") return `group ${v.group}`;
    if (v.kind === undefined && Array.isArray(v.tags)) return `tags: ${v.tags.join(", ")}`;
    // A feature's target: what it describes.
    return v.kind === "web" ? `web ${v.url}` : `api ${JSON.stringify({ tags: v.tags, paths: v.paths })}`;
  }
  if (key === "steps" && Array.isArray(v)) return `${v.length} step${v.length === 1 ? "" : "s"}`;
  if (key === "key" && isRec(v)) return `${v.prefix}… (${v.name})`;
  if (key === "runner" && isRec(v)) return `${v.name ?? "a deleted runner"} (${v.id})`;
  if ((key === "user" || key === "workspace") && isRec(v)) return `${v.name} <${v.email ?? v.slug}> (${v.id})`;
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.length ? fit(v.join(", "), max, style) : "-";
  if (typeof v === "string") return fit(v, max, style);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return fit(JSON.stringify(v), max, style);
}

/** Columns worth a table, in this order, when the records have them. */
const COLUMNS = [
  "id",
  "user_id",
  "slug",
  "name",
  "automation_name",
  "group_name",
  "email",
  "role",
  "prefix",
  "kind",
  "status",
  "trigger",
  "summary",
  "last_run",
  "duration_ms",
  "expires_at",
  "last_used_at",
  "revoked_at",
  "created_at",
];

/**
 * Runners (the records that say whether they are `connected`): what an operator looks at them for — can it take
 * runs now, which (its labels, whether it runs browsers), which svc it is, how many it holds, when it was last
 * heard from. Its token's prefix is on `runners show`.
 */
const RUNNER_COLUMNS = ["id", "name", "labels", "scope", "version", "browser", "connected", "running", "last_seen_at", "revoked_at"];

/** Environments: where their runs go (protected, which runners) and what they hold, secrets by name only. */
const ENVIRONMENT_COLUMNS = ["id", "name", "protected", "runner_labels", "secret_names", "key"];
/** Schedules: what each runs, whether it is on and when it is next due, and why the last due time failed. */
const SCHEDULE_COLUMNS = ["id", "name", "target", "enabled", "next_run_at", "last_error"];
/** An alert channel's deliveries: what was sent, how it went, and why not (a failing receiver's answer). */
const DELIVERY_COLUMNS = ["delivery_id", "event", "status", "attempts", "status_code", "error", "created_at"];

function columnsFor(first: Rec): string[] {
  if ("connected" in first) return RUNNER_COLUMNS;
  if ("next_runs_at" in first) return SCHEDULE_COLUMNS;
  if ("delivery_id" in first) return DELIVERY_COLUMNS;
  if ("runner_labels" in first && "secret_names" in first) return ENVIRONMENT_COLUMNS;
  return COLUMNS;
}

export function renderList(records: Rec[], noun: string, style: Style): string {
  const items = records.map((r) => printableData(r) as Rec);
  if (items.length === 0) return `No ${noun} found.`;
  const first = items[0] ?? {};
  const chosen = columnsFor(first);
  // Records of no known kind show their first eight columns; a kind's own list is what it shows, runners' ten too.
  const cols = chosen.filter((c) => c in first).slice(0, chosen === COLUMNS ? 8 : chosen.length);
  const cell = (it: Rec, c: string) => (c === "status" && "flaky" in it ? runStatusText(it, style) : formatValue(c, it[c], style, 48));
  return table(
    cols.map((c) => c.replace(/_/g, " ")),
    items.map((it) => cols.map((c) => cell(it, c))),
  );
}

const duration = (ms: unknown) => (typeof ms === "number" ? `${Math.round(ms)} ms` : "-");
/** A value as a check recorded it: JSON, so a string's spaces and a number's type both show. */
const asShown = (v: unknown) => (v === undefined ? "nothing" : (JSON.stringify(v) ?? String(v)));

const NOT_PASSED = new Set(["failed", "error", "timed_out", "cancelled"]);

/** What went wrong in one finished run, in full: its failed steps with every failed check's expected and actual. */
function failureLines(run: Rec): string[] {
  const steps = Array.isArray(run.steps) ? (run.steps as unknown[]).filter(isRec) : [];
  const last: string[] = [];
  const said: string[] = [];
  for (const s of steps.filter((x) => x.status === "failed" || x.status === "error")) {
    const where = `step ${Number(s.index) + 1} (${s.name})`;
    said.push(`${where}: ${s.message ?? ""}`);
    last.push(`${where} ${s.status}: ${s.message ?? ""}`);
    const checks = Array.isArray(s.assertions) ? (s.assertions as unknown[]).filter(isRec).filter((x) => x.passed === false) : [];
    for (const c of checks) {
      last.push(`  ✗ ${c.assertion}`);
      if ("expected" in c) last.push(`    expected: ${asShown(c.expected)}`);
      if ("actual" in c) last.push(`    actual:   ${asShown(c.actual)}`);
    }
  }
  if (typeof run.error === "string" && !said.includes(run.error)) last.push(run.error);
  if (last.length === 0) last.push(String(run.status));
  const attempts = Array.isArray(run.attempts) ? (run.attempts as unknown[]).filter(isRec) : [];
  if (attempts.length < 2) return last;
  // A retried run: what each earlier attempt said, then the last attempt's details.
  const of = typeof run.max_attempts === "number" ? run.max_attempts : attempts.length;
  const earlier = attempts.slice(0, -1).map((a) => `attempt ${a.attempt} of ${of} ${a.status}: ${a.message ?? a.error ?? a.status}`);
  return [...earlier, `attempt ${attempts.length} of ${of} ${run.status}:`, ...last.map((l) => `  ${l}`)];
}

/**
 * The numbered list of every run that did not pass, with all its messages, nothing cut: the end of a watched
 * run or group run, where a CI log is read. Empty when all passed.
 */
export function renderFailures(records: Rec[], style: Style): string {
  const runs = records.map((r) => printableData(r) as Rec);
  const failed = runs.filter((r) => NOT_PASSED.has(String(r.status)));
  if (failed.length === 0) return "";
  // Cancelled runs did not fail: a heading that counts them as failures misleads the one reading the CI log.
  const cancelled = failed.filter((r) => r.status === "cancelled").length;
  const failures = failed.length - cancelled;
  // A quarantined automation's failure is listed, but does not fail the command: the heading says so.
  const apart = failed.filter((r) => setApart({ status: String(r.status), quarantined: r.quarantined === true })).length;
  const counted = `${failures} ${failures === 1 ? "failure" : "failures"}${apart > 0 ? ` (${apart} quarantined: not counted)` : ""}`;
  const heading = cancelled === 0 ? counted : failures === 0 ? `${cancelled} cancelled` : `${counted}, ${cancelled} cancelled`;
  const out = [`${heading}:`];
  failed.forEach((r, i) => {
    const n = `${i + 1}) `;
    // Where it ran, when a runner executed it: a check that fails on one network only says which.
    const where = isRec(r.runner) ? ` on runner ${r.runner.name ?? r.runner.id}` : "";
    const quarantined = setApart({ status: String(r.status), quarantined: r.quarantined === true }) ? " (quarantined)" : "";
    out.push(`${n}${r.automation_name} (${r.id}) ${paint(String(r.status), String(r.status), style)}${quarantined}${where}`);
    for (const line of failureLines(r)) out.push(`${" ".repeat(n.length)}${line}`);
  });
  return out.join("\n");
}

/** Shown after the plain fields, in their own form (or not at all, like a project's OpenAPI document). */
const SPECIAL_IN_RECORD = new Set(["openapi", "steps", "attempts", "runs", "warnings", "artifacts", "daily"]);

export function renderRecord(record: Rec, style: Style): string {
  const rec = printableData(record) as Rec;
  // A history's `runs` is a count, shown with the other fields; a group run's is its list of runs, shown below.
  const keys = Object.keys(rec).filter((k) => !SPECIAL_IN_RECORD.has(k) || (k === "runs" && typeof rec.runs === "number"));
  const pad = Math.max(9, ...keys.map((k) => k.length));
  const isRun = Array.isArray(rec.attempts);
  const lines = keys.map((k) => `${k.padEnd(pad)}  ${k === "status" && isRun ? runStatusText(rec, style) : formatValue(k, rec[k], style, 100)}`);
  if (Array.isArray(rec.artifacts) && rec.artifacts.length) lines.push(`${"artifacts".padEnd(pad)}  ${(rec.artifacts as string[]).join(", ")}`);
  const steps = Array.isArray(rec.steps) ? (rec.steps as unknown[]) : [];
  const stepResults = steps.filter((s): s is Rec => isRec(s) && "status" in s && "index" in s);
  const attempts = isRun ? (rec.attempts as unknown[]).filter(isRec) : [];
  if (attempts.length > 1) {
    lines.push(
      "",
      table(
        ["attempt", "status", "duration", "message"],
        attempts.map((a) => [
          `${a.attempt} of ${rec.max_attempts ?? attempts.length}`,
          formatValue("status", a.status, style),
          duration(a.duration_ms),
          a.message ? fit(String(a.message), 80, style) : "",
        ]),
      ),
    );
  }
  if (stepResults.length) {
    lines.push(
      "",
      table(
        ["#", "step", "status", "duration", "message"],
        stepResults.map((s) => [
          // Shown from 1, as run errors name them ("step 1 (GET /items/1)").
          String(Number(s.index) + 1),
          fit(String(s.name), 40, style),
          formatValue("status", s.status, style),
          formatValue("duration_ms", s.duration_ms, style),
          s.message ? fit(String(s.message), 80, style) : "",
        ]),
      ),
    );
  } else if (steps.length) {
    lines.push(`${"steps".padEnd(pad)}  ${formatValue("steps", steps, style)}`);
  }
  if (Array.isArray(rec.runs) && rec.runs.length) lines.push("", renderList(rec.runs as Rec[], "runs", style));
  // A history's days, the ones that had runs (a month of empty days says nothing).
  if (Array.isArray(rec.daily)) {
    const days = (rec.daily as unknown[]).filter((d): d is Rec => isRec(d) && Number(d.runs) > 0);
    if (days.length)
      lines.push(
        "",
        table(
          ["date", "runs", "passed", "failed", "pass rate", "median"],
          days.map((d) => [
            String(d.date),
            String(d.runs),
            String(d.passed),
            String(d.failed),
            formatValue("pass_rate", d.pass_rate, style),
            formatValue("p50_ms", d.p50_ms, style),
          ]),
        ),
      );
  }
  // A finished run that did not pass ends with what went wrong, in full (the table above may cut it on a terminal).
  if (isRun && Array.isArray(rec.steps)) {
    const failures = renderFailures([rec], style);
    if (failures) lines.push("", failures);
  }
  if (Array.isArray(rec.warnings) && rec.warnings.length) {
    lines.push("", "warnings:", ...(rec.warnings as Rec[]).map((w) => `  - ${w.line !== undefined ? `line ${w.line}: ` : ""}${w.message}`));
  }
  return lines.join("\n");
}

/** get_dashboard: a line per project (its automations by health, its runs going), then the latest runs. */
export function renderDashboard(dashboard: Rec, style: Style): string {
  const projects = (Array.isArray(dashboard.projects) ? (dashboard.projects as unknown[]) : []).filter(isRec);
  if (projects.length === 0) return "No projects yet.";
  const count = (p: Rec, k: string) => String(Number(p[k] ?? 0));
  const lines = [
    table(
      ["project", "automations", "passing", "flaky", "failing", "no verdict", "queued", "running"],
      projects.map((p) => [
        fit(String(p.slug), 40, style),
        ...["automations", "passing", "flaky", "failing", "without_verdict", "queued", "running"].map((k) => count(p, k)),
      ]),
    ),
  ];
  if (dashboard.more_projects === true) lines.push(`(the first ${projects.length} projects: svc projects list shows them all)`);
  const recent = Array.isArray(dashboard.recent_runs) ? (dashboard.recent_runs as Rec[]) : [];
  if (recent.length > 0) {
    const slugOf = new Map(projects.map((p) => [p.id, p.slug]));
    lines.push(
      "",
      "latest runs:",
      table(
        ["id", "automation", "project", "status", "duration", "created at"],
        recent.map((r) => [
          String(r.id),
          fit(String(r.automation_name), 40, style),
          String(slugOf.get(r.project_id) ?? r.project_id),
          runStatusText(r, style),
          formatValue("duration_ms", r.duration_ms, style),
          formatValue("created_at", r.created_at, style),
        ]),
      ),
    );
  }
  return lines.join("\n");
}

/** A list response ({data, next_cursor}) becomes a table, anything else a record view. */
export function renderJson(answer: unknown, noun: string, style: Style): string {
  const json = printableData(answer);
  if (isRec(json) && Array.isArray(json.projects) && Array.isArray(json.recent_runs)) return renderDashboard(json, style);
  if (isRec(json) && Array.isArray(json.data)) {
    const more = typeof json.next_cursor === "string" ? `\n(more: --cursor ${json.next_cursor})` : "";
    return renderList(json.data as Rec[], noun, style) + more;
  }
  if (isRec(json)) return renderRecord(json, style);
  return JSON.stringify(json, null, 2);
}

/**
 * `--json`: the API's JSON exactly as it arrived, ending with one newline (for scripts and jq); the parsed value
 * re-serialised only when there is no body text (a 204).
 */
export function jsonAsReceived(text: string | null, parsed?: unknown): string {
  const out = text ?? JSON.stringify(parsed);
  return out.endsWith("\n") ? out : `${out}\n`;
}
