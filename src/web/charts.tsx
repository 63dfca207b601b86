// Charts drawn with uPlot: a project's trend (pass rate and median duration per day) and an automation's timeline of
// runs (one bar per run: status by colour, duration as height, retries marked). Each chart is described for screen
// readers by a text summary, and its numbers are one click away as a table; the canvas itself is hidden from them.
// With no finished run there is no chart, only a sentence saying so.
import { useEffect, useRef } from "preact/hooks";
import type { ComponentChildren } from "preact";
import uPlot from "uplot";
import type { Run } from "./types";
import { TERMINAL_RUN_STATUSES } from "../manifest/records";
import { duration, Empty, plural, when } from "./ui";

export interface HistoryDay {
  date: string;
  runs: number;
  passed: number;
  failed: number;
  pass_rate: number | null;
  p50_ms: number | null;
}

const COLORS = { pass: "#1d7a46", fail: "#c0392b", idle: "#6b7280", accent: "#2457d6", warn: "#a86400" };
const HEIGHT = 180;

/** Mounts a uPlot chart in a container, sized to its width (so it stays readable at 390 px) and resized with it. */
function UPlot({ options, data }: { options: Omit<uPlot.Options, "width" | "height">; data: uPlot.AlignedData }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const chart = new uPlot({ ...options, width: Math.max(200, el.clientWidth), height: HEIGHT }, data, el);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [options, data]);
  return <div ref={box} class="chart-canvas" aria-hidden="true" />;
}

/** A chart with its description: the summary is read out, the table is the same numbers for anyone. */
function Figure({ label, summary, table, children }: { label: string; summary: string; table: ComponentChildren; children: ComponentChildren }) {
  return (
    <figure class="chart" aria-label={label}>
      {children}
      <figcaption class="chart-summary">{summary}</figcaption>
      <details class="chart-table">
        <summary>Show as table</summary>
        <div class="table-wrap">{table}</div>
      </details>
    </figure>
  );
}

const pct = (r: number | null) => (r === null ? "—" : `${Math.round(r * 100)}%`);
const dayTime = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

/** Pass rate (left axis, %) and median duration (right axis) per day. */
export function TrendChart({ days, totals }: { days: HistoryDay[]; totals: { runs: number; pass_rate: number | null; p50_ms: number | null } }) {
  const withRuns = days.filter((d) => d.runs > 0);
  const first = withRuns[0];
  const last = withRuns[withRuns.length - 1];
  // Without a run there is nothing to draw: empty axes showed only a made-up scale (0 ms to 1 ms).
  if (withRuns.length === 0) return <Empty>No finished runs in the last {days.length} days.</Empty>;
  const summary =
    `Over the last ${days.length} days: ${plural(totals.runs, "run")}, ${pct(totals.pass_rate)} passed, median duration ${duration(totals.p50_ms)}. ` +
    (first === last || first?.date === last?.date
      ? `Pass rate ${pct(last?.pass_rate ?? null)} on ${last?.date}.`
      : `Pass rate ${pct(first?.pass_rate ?? null)} on ${first?.date}, ${pct(last?.pass_rate ?? null)} on ${last?.date}.`);
  const data: uPlot.AlignedData = [
    days.map((d) => dayTime(d.date)),
    days.map((d) => (d.pass_rate === null ? null : Math.round(d.pass_rate * 1000) / 10)),
    days.map((d) => d.p50_ms),
  ];
  const options: Omit<uPlot.Options, "width" | "height"> = {
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, rate: { range: [0, 100] }, ms: { range: (_u, _min, max) => [0, Math.max(1, max ?? 1)] } },
    axes: [
      {},
      { scale: "rate", values: (_u, ticks) => ticks.map((t) => `${t}%`), size: 48 },
      // A fraction of a millisecond has no label of its own (rounded, an empty chart read "1 ms, 1 ms, 0 ms").
      { scale: "ms", side: 1, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? duration(t) : "")), grid: { show: false }, size: 60 },
    ],
    series: [
      { label: "Day" },
      { label: "Pass rate", scale: "rate", stroke: COLORS.pass, width: 2, points: { show: true }, value: (_u, v) => (v === null ? "—" : `${v}%`) },
      { label: "Median duration", scale: "ms", stroke: COLORS.accent, width: 1.5, dash: [4, 4], value: (_u, v) => (v === null ? "—" : duration(v)) },
    ],
  };
  return (
    <Figure
      label="Trend of pass rate and duration per day"
      summary={summary}
      table={
        <table class="compact" data-testid="trend-table">
          <thead>
            <tr>
              <th>Day</th>
              <th>Runs</th>
              <th>Passed</th>
              <th>Pass rate</th>
              <th>Median</th>
            </tr>
          </thead>
          <tbody>
            {withRuns.map((d) => (
              <tr key={d.date}>
                <td data-label="Day">{d.date}</td>
                <td data-label="Runs">{d.runs}</td>
                <td data-label="Passed">{d.passed}</td>
                <td data-label="Pass rate">{pct(d.pass_rate)}</td>
                <td data-label="Median">{duration(d.p50_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      <UPlot options={options} data={data} />
    </Figure>
  );
}

/** Finished and not passed, not cancelled: what the timeline draws red. */
const FAILED = new Set<string>(TERMINAL_RUN_STATUSES.filter((s) => s !== "passed" && s !== "cancelled"));

/** One bar per finished run, oldest on the left: green passed, red failed, grey cancelled; ▲ marks a retry. */
export function RunTimeline({ runs }: { runs: Run[] }) {
  const ordered = runs.filter((r) => r.finished_at !== null).reverse();
  // Without a run there is nothing to draw: empty axes showed only a made-up scale and a lone run number 0.
  if (ordered.length === 0) return <Empty>No finished runs yet.</Empty>;
  const x = ordered.map((_, i) => i + 1);
  const only = (pred: (r: Run) => boolean) => ordered.map((r) => (pred(r) ? (r.duration_ms ?? 0) : null));
  const retried = ordered.map((r) => (r.attempts.length > 1 ? (r.duration_ms ?? 0) : null));
  const data: uPlot.AlignedData = [x, only((r) => r.status === "passed"), only((r) => FAILED.has(r.status)), only((r) => r.status === "cancelled"), retried];
  const bars = uPlot.paths.bars?.({ size: [0.7, 40] });
  const bar = (label: string, color: string): uPlot.Series => ({ label, fill: color, stroke: color, paths: bars, points: { show: false } });
  const options: Omit<uPlot.Options, "width" | "height"> = {
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max ?? 1) * 1.15] } },
    axes: [
      { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : "")) },
      { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? duration(t) : "")), size: 60 },
    ],
    series: [
      { label: "Run" },
      bar("Passed", COLORS.pass),
      bar("Failed", COLORS.fail),
      bar("Cancelled", COLORS.idle),
      { label: "Retried", stroke: COLORS.warn, width: 0, points: { show: true, size: 9, fill: COLORS.warn, stroke: COLORS.warn } },
    ],
  };
  const passed = ordered.filter((r) => r.status === "passed").length;
  const failed = ordered.filter((r) => FAILED.has(r.status)).length;
  const withRetries = ordered.filter((r) => r.attempts.length > 1).length;
  const summary =
    `Last ${plural(ordered.length, "run")}, oldest first: ${passed} passed, ${failed} failed${withRetries ? `, ${withRetries} needed a retry` : ""}. ` +
    `Latest ${ordered[ordered.length - 1]?.status} in ${duration(ordered[ordered.length - 1]?.duration_ms ?? null)}.`;
  return (
    <Figure
      label="Timeline of runs: status by colour, duration as height"
      summary={summary}
      table={
        <table class="compact" data-testid="timeline-table">
          <thead>
            <tr>
              <th>#</th>
              <th>When</th>
              <th>Status</th>
              <th>Duration</th>
              <th>Attempts</th>
            </tr>
          </thead>
          <tbody>
            {ordered.map((r, i) => (
              <tr key={r.id}>
                <td data-label="#">{i + 1}</td>
                <td data-label="When">{when(r.created_at)}</td>
                <td data-label="Status">{r.status}</td>
                <td data-label="Duration">{duration(r.duration_ms)}</td>
                <td data-label="Attempts">{r.attempts.length}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    >
      <UPlot options={options} data={data} />
    </Figure>
  );
}
