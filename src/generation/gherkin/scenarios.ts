// Reads acceptance criteria with the Gherkin parser and lists the concrete scenarios: outlines become one per
// example row, background steps are put in front, and every step keeps its line in the criteria.
import { AstBuilder, GherkinClassicTokenMatcher, Parser } from "@cucumber/gherkin";
import { type Background, type FeatureChild, IdGenerator, type Scenario, type Step as GherkinStep } from "@cucumber/messages";

export interface ScenarioStep {
  keyword: string;
  text: string;
  line: number;
  docString?: string;
  /** A data table is written under the line: no step phrase reads one. */
  dataTable?: boolean;
}

/**
 * The step lines all the concrete scenarios of one generation may hold together. A Background is repeated in front
 * of every scenario and an outline's steps once per example row, so criteria of a few hundred kilobytes can stand
 * for millions of lines: far more than one generation can store (8 MB of drafts), and enough to exhaust memory.
 */
export const MAX_SCENARIO_LINES = 100_000;

export interface ConcreteScenario {
  title: string;
  /** The scenario's own title (before example values are put in), as warnings name it. */
  sourceTitle: string;
  line: number;
  tags: string[];
  steps: ScenarioStep[];
  /** An outline whose Examples have no rows: nothing to make, but worth a warning. */
  noExampleRows?: boolean;
  /** `<name>`s left in its lines: an outline's steps name a column its Examples do not have (or it has no Examples). */
  unfilled?: { line: number; names: string[]; columns: string[] }[];
}

/** What is left of the step lines the scenarios may hold, and where the reading stopped when they ran out. */
interface LineBudget {
  left: number;
  stoppedAt?: { title: string; line: number };
}

const SCENARIO_LINE = /^\s*(Scenario|Scenario Outline|Scenario Template|Example)\s*:/m;

export function hasScenarios(criteria: string): boolean {
  return SCENARIO_LINE.test(criteria);
}

function fill(text: string, values: Map<string, string>): string {
  return text.replace(/<([^<>]+)>/g, (whole, name: string) => values.get(name) ?? whole);
}

function toSteps(steps: readonly GherkinStep[], offset: number, values: Map<string, string>): ScenarioStep[] {
  return steps.map((s) => ({
    keyword: s.keyword.trim(),
    text: fill(s.text, values),
    line: s.location.line - offset,
    ...(s.docString ? { docString: fill(s.docString.content, values) } : {}),
    ...(s.dataTable ? { dataTable: true } : {}),
  }));
}

/** A `<name>` as an outline writes a column of its Examples. */
const PLACEHOLDER = /<([A-Za-z_][\w -]*)>/g;

/**
 * The lines of an outline (its own steps, not the Background's) that still hold a `<name>` once a row's values are
 * put in: a misspelt column would otherwise be sent as it is written (`/books/<bookid>`).
 */
function unfilledPlaceholders(scenario: Scenario, columns: string[], offset: number): ConcreteScenario["unfilled"] {
  const out: NonNullable<ConcreteScenario["unfilled"]> = [];
  for (const s of scenario.steps) {
    const names = [...`${s.text}\n${s.docString?.content ?? ""}`.matchAll(PLACEHOLDER)].map((m) => m[1] ?? "").filter((n) => !columns.includes(n));
    if (names.length > 0) out.push({ line: s.location.line - offset, names: [...new Set(names)], columns });
  }
  return out.length > 0 ? out : undefined;
}

const tagNames = (tags: readonly { name: string }[]) => tags.map((t) => t.name.replace(/^@/, ""));

/** `inherited`: the tags of its Feature and Rule, which (as in Cucumber) its scenarios carry too. */
function expand(scenario: Scenario, background: readonly GherkinStep[], inherited: readonly string[], offset: number, budget: LineBudget): ConcreteScenario[] {
  const sourceTitle = scenario.name.trim() || `Scenario at line ${scenario.location.line - offset}`;
  const tags = [...new Set([...inherited, ...tagNames(scenario.tags)])];
  const line = scenario.location.line - offset;
  const lines = background.length + scenario.steps.length;
  /** Takes one concrete scenario's lines from the budget; false (and the reading stops) when they do not fit. */
  const fits = () => {
    if (budget.stoppedAt) return false;
    if (budget.left < lines) {
      budget.stoppedAt = { title: sourceTitle, line };
      return false;
    }
    budget.left -= lines;
    return true;
  };
  const isOutline = /outline|template/i.test(scenario.keyword);
  if (scenario.examples.length === 0) {
    if (!fits()) return [];
    const unfilled = isOutline ? unfilledPlaceholders(scenario, [], offset) : undefined;
    return [
      { title: sourceTitle, sourceTitle, line, tags, steps: toSteps([...background, ...scenario.steps], offset, new Map()), ...(unfilled ? { unfilled } : {}) },
    ];
  }
  const out: ConcreteScenario[] = [];
  let rows = 0;
  for (const ex of scenario.examples) {
    const header = ex.tableHeader?.cells.map((c) => c.value) ?? [];
    const unfilled = unfilledPlaceholders(scenario, header, offset);
    const rowTags = [...new Set([...tags, ...tagNames(ex.tags)])];
    for (const r of ex.tableBody) {
      rows++;
      if (!fits()) return out;
      const values = new Map(header.map((h, i) => [h, r.cells[i]?.value ?? ""]));
      const filled = fill(sourceTitle, values);
      const shown = [...values].map(([k, v]) => `${k}=${v}`).join(", ");
      out.push({
        title: filled === sourceTitle ? `${sourceTitle} (example ${rows}: ${shown})` : filled,
        sourceTitle,
        line,
        tags: rowTags,
        steps: toSteps([...background, ...scenario.steps], offset, values),
        ...(unfilled ? { unfilled } : {}),
      });
    }
  }
  if (rows === 0) return [{ title: sourceTitle, sourceTitle, line, tags, steps: [], noExampleRows: true }];
  return out;
}

function collect(
  children: readonly FeatureChild[],
  inherited: readonly GherkinStep[],
  tags: readonly string[],
  offset: number,
  budget: LineBudget,
): ConcreteScenario[] {
  let background: readonly GherkinStep[] = inherited;
  const out: ConcreteScenario[] = [];
  for (const child of children) {
    if (budget.stoppedAt) break;
    if (child.background) background = [...inherited, ...(child.background as Background).steps];
    else if (child.scenario) out.push(...expand(child.scenario, background, tags, offset, budget));
    else if (child.rule) out.push(...collect(child.rule.children as FeatureChild[], background, [...tags, ...tagNames(child.rule.tags)], offset, budget));
  }
  return out;
}

/** The scenarios of the criteria; a `Feature:` line is supplied when the criteria start at `Scenario:`. */
export function readScenarios(
  criteria: string,
  featureName: string,
): { scenarios: ConcreteScenario[]; stoppedAt?: { title: string; line: number } } | { error: string } {
  const hasFeature = /^\s*Feature\s*:/m.test(criteria);
  const source = hasFeature ? criteria : `Feature: ${featureName.replace(/\n/g, " ")}\n${criteria}`;
  const offset = hasFeature ? 0 : 1;
  try {
    const doc = new Parser(new AstBuilder(IdGenerator.incrementing()), new GherkinClassicTokenMatcher()).parse(source);
    const budget: LineBudget = { left: MAX_SCENARIO_LINES };
    const scenarios = doc.feature ? collect(doc.feature.children, [], tagNames(doc.feature.tags), offset, budget) : [];
    return budget.stoppedAt ? { scenarios, stoppedAt: budget.stoppedAt } : { scenarios };
  } catch (e) {
    // The parser's messages start with "(line:column)"; shift the line to the criteria as written.
    const message = (e as Error).message
      .replace(/^Parser errors:\s*/, "")
      .replace(/\s*\n\s*/g, "; ")
      .replace(/\((\d+):(\d+)\)/g, (_, l: string, c: string) => `(line ${Number(l) - offset}, column ${c})`);
    return { error: message };
  }
}
