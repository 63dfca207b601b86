// The gherkin generator: one automation per scenario (per example row of an outline), compiled from the
// step phrases; a line that matches no phrase becomes a warning and never fails the job.
import type { GenerationWarningRecord, GeneratedDraft } from "../../core/generations/queue";
import type { HttpStep, Step } from "../../manifest/automation-format";
import { checkDraft, describeProblems } from "../draft-check";
import type { Generator, GeneratorOutput } from "../types";
import { matchPhrase } from "./phrases";
import { type ConcreteScenario, hasScenarios, MAX_SCENARIO_LINES, readScenarios, type ScenarioStep } from "./scenarios";
import { nearestPhrase } from "./suggest";

interface Skipped {
  line: number;
  text: string;
  reason: string;
  suggestion?: string;
}

const quoteLine = (s: ScenarioStep) => `${s.keyword} ${s.text}`.trim();

/** `unchecked`: how many requests were left with no check while lines were left out (then no draft is made). */
function compileScenario(sc: ConcreteScenario): { steps: Step[]; kind: "http" | "browser"; skipped: Skipped[]; unchecked: number } {
  const steps: Step[] = [];
  const skipped: Skipped[] = [];
  let lastRequest: HttpStep | null = null;
  let hasPage = false;
  for (const s of sc.steps) {
    const m = matchPhrase(s.text, s.docString);
    if (!m) {
      skipped.push({ line: s.line, text: quoteLine(s), reason: "matches no step phrase", suggestion: nearestPhrase(s.text) });
      continue;
    }
    if ("error" in m) {
      skipped.push({ line: s.line, text: quoteLine(s), reason: m.error, suggestion: m.phrase.example });
      continue;
    }
    const e = m.effect;
    if (e.kind === "page") {
      hasPage = true;
      steps.push(e.step);
    } else if (e.kind === "request") {
      const body = e.body === undefined ? {} : "json" in e.body ? { json: e.body.json } : { body: e.body.text };
      lastRequest = { name: `${e.method} ${e.url}`, request: { method: e.method as "GET", url: e.url, ...body }, expect: [] };
      steps.push(lastRequest);
    } else if (lastRequest) {
      lastRequest.expect = [...(lastRequest.expect ?? []), e.assertion];
    } else {
      skipped.push({ line: s.line, text: quoteLine(s), reason: 'checks a response, but no request was sent before it (I send GET "/path")' });
    }
  }
  // A request the scenario checks nothing of is expected to succeed, as the importers do; unless lines were left
  // out (they may have been its checks: guessing could turn the test around), when compileCriteria makes no draft.
  const unchecked = steps.filter((st) => "request" in st && st.expect?.length === 0);
  for (const st of unchecked) {
    if (skipped.length > 0) delete (st as { expect?: unknown }).expect;
    else (st as { expect?: unknown[] }).expect = [{ status: { lt: 400 } }];
  }
  return { steps, kind: hasPage ? "browser" : "http", skipped, unchecked: skipped.length > 0 ? unchecked.length : 0 };
}

function describe(featureName: string, sc: ConcreteScenario, skipped: Skipped[]): string {
  const base = `Generated from the acceptance criteria of "${featureName}", scenario "${sc.sourceTitle}" (line ${sc.line}).`;
  if (skipped.length === 0) return base;
  const left = skipped.map((s) => `line ${s.line} "${s.text}" (${s.reason})`).join("; ");
  return `${base} Incomplete: not understood, so left out: ${left}.`;
}

export function compileCriteria(featureName: string, criteria: string): GeneratorOutput {
  const read = readScenarios(criteria, featureName);
  if ("error" in read) {
    return { automations: [], warnings: [{ generator: "gherkin", message: `The acceptance criteria are not valid Gherkin: ${read.error}` }] };
  }
  const automations: GeneratedDraft[] = [];
  const warnings: GenerationWarningRecord[] = [];
  const warned = new Set<number>();
  const warnedUnfilled = new Set<number>();
  const warnedTables = new Set<number>();
  for (const sc of read.scenarios) {
    // A table under a line is part of what the line says (rows to see, fields to fill): read by no phrase, so
    // the check made of the line is less than the criteria ask, and that is said rather than passed over.
    for (const s of sc.steps) {
      if (!s.dataTable || warnedTables.has(s.line)) continue;
      warnedTables.add(s.line);
      warnings.push({
        generator: "gherkin",
        scenario: sc.sourceTitle,
        line: s.line,
        message: `Line ${s.line} of scenario "${sc.sourceTitle}": the data table under "${quoteLine(s)}" is not read (no step phrase takes one); write one line per row for each to be checked`,
      });
    }
    for (const u of sc.unfilled ?? []) {
      if (warnedUnfilled.has(u.line)) continue;
      warnedUnfilled.add(u.line);
      const names = u.names.map((n) => `<${n}>`).join(", ");
      const columns = u.columns.length > 0 ? `its Examples have the columns ${u.columns.join(", ")}` : "it has no Examples table";
      warnings.push({
        generator: "gherkin",
        scenario: sc.sourceTitle,
        line: u.line,
        message: `Line ${u.line} of scenario "${sc.sourceTitle}": ${names} is not filled in, as ${columns}; the line is used as written, with ${names} in it`,
      });
    }
    if (sc.noExampleRows) {
      warnings.push({
        generator: "gherkin",
        scenario: sc.sourceTitle,
        line: sc.line,
        message: `No automation for scenario "${sc.sourceTitle}": its Examples table has no rows`,
      });
      continue;
    }
    const { steps, kind, skipped, unchecked } = compileScenario(sc);
    for (const s of skipped) {
      if (warned.has(s.line)) continue;
      warned.add(s.line);
      warnings.push({
        generator: "gherkin",
        scenario: sc.sourceTitle,
        line: s.line,
        text: s.text,
        message: `Line ${s.line} of scenario "${sc.sourceTitle}": "${s.text}" ${s.reason}${s.suggestion ? `; nearest phrase: ${s.suggestion}` : ""}`,
        ...(s.suggestion ? { suggestion: s.suggestion } : {}),
      });
    }
    if (steps.length === 0) {
      warnings.push({
        generator: "gherkin",
        scenario: sc.sourceTitle,
        line: sc.line,
        message: `No automation for scenario "${sc.title}": none of its lines could be used`,
      });
      continue;
    }
    // A draft that sends requests and checks nothing of them passes against a service that is down.
    if (unchecked > 0) {
      warnings.push({
        generator: "gherkin",
        scenario: sc.sourceTitle,
        line: sc.line,
        message: `No automation for scenario "${sc.title}": it would send ${unchecked === 1 ? "a request" : `${unchecked} requests`} and check nothing, as the lines that may check ${unchecked === 1 ? "it" : "them"} were not understood (see the warnings above); write them with the phrases of svc://docs/generation`,
      });
      continue;
    }
    const checked = checkDraft({
      name: sc.title.slice(0, 200),
      description: describe(featureName, sc, skipped),
      kind,
      steps,
      tags: ["generated", "gherkin", ...sc.tags].slice(0, 50),
    });
    if ("problems" in checked) {
      warnings.push({
        generator: "gherkin",
        scenario: sc.sourceTitle,
        line: sc.line,
        message: `No automation for scenario "${sc.title}": what was understood is not a valid automation (${describeProblems(checked.problems)})`,
      });
      continue;
    }
    automations.push(checked.draft);
  }
  if (read.stoppedAt) {
    const { title, line } = read.stoppedAt;
    warnings.push({
      generator: "gherkin",
      scenario: title,
      line,
      message: `Stopped at scenario "${title}" (line ${line}): the scenarios hold more than ${MAX_SCENARIO_LINES} step lines with their Background and example rows (the limit for one generation); it and the scenarios after it made no automation`,
    });
  }
  return { automations, warnings };
}

export const gherkinGenerator: Generator = {
  name: "gherkin",
  missingInput: (input) =>
    hasScenarios(input.feature.acceptance_criteria)
      ? null
      : 'the feature\'s acceptance criteria contain no Gherkin scenario (a "Scenario:" with Given/When/Then lines)',
  async generate(input, run) {
    await run.progress(0, 1);
    const out = compileCriteria(input.feature.name, input.feature.acceptance_criteria);
    await run.progress(1, 1);
    return out;
  },
};
