// Reads acceptance criteria with the Gherkin parser and lists the concrete scenarios: outlines become one per
// example row, background steps are put in front, and every step keeps its line in the criteria.
import { AstBuilder, GherkinClassicTokenMatcher, Parser } from "@cucumber/gherkin";
import { type Background, type FeatureChild, IdGenerator, type Scenario, type Step as GherkinStep } from "@cucumber/messages";

export interface ScenarioStep {
  keyword: string;
  text: string;
  line: number;
  docString?: string;
}

export interface ConcreteScenario {
  title: string;
  /** The scenario's own title (before example values are put in), as warnings name it. */
  sourceTitle: string;
  line: number;
  tags: string[];
  steps: ScenarioStep[];
  /** An outline whose Examples have no rows: nothing to make, but worth a warning. */
  noExampleRows?: boolean;
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
  }));
}

function expand(scenario: Scenario, background: readonly GherkinStep[], offset: number): ConcreteScenario[] {
  const sourceTitle = scenario.name.trim() || `Scenario at line ${scenario.location.line - offset}`;
  const tags = scenario.tags.map((t) => t.name.replace(/^@/, ""));
  const line = scenario.location.line - offset;
  const rows = scenario.examples.flatMap((ex) => {
    const header = ex.tableHeader?.cells.map((c) => c.value) ?? [];
    return ex.tableBody.map((r) => new Map(header.map((h, i) => [h, r.cells[i]?.value ?? ""])));
  });
  if (scenario.examples.length === 0) {
    return [{ title: sourceTitle, sourceTitle, line, tags, steps: toSteps([...background, ...scenario.steps], offset, new Map()) }];
  }
  if (rows.length === 0) return [{ title: sourceTitle, sourceTitle, line, tags, steps: [], noExampleRows: true }];
  return rows.map((values, i) => {
    const filled = fill(sourceTitle, values);
    const shown = [...values].map(([k, v]) => `${k}=${v}`).join(", ");
    return {
      title: filled === sourceTitle ? `${sourceTitle} (example ${i + 1}: ${shown})` : filled,
      sourceTitle,
      line,
      tags,
      steps: toSteps([...background, ...scenario.steps], offset, values),
    };
  });
}

function collect(children: readonly FeatureChild[], inherited: readonly GherkinStep[], offset: number): ConcreteScenario[] {
  let background: readonly GherkinStep[] = inherited;
  const out: ConcreteScenario[] = [];
  for (const child of children) {
    if (child.background) background = [...inherited, ...(child.background as Background).steps];
    else if (child.scenario) out.push(...expand(child.scenario, background, offset));
    else if (child.rule) out.push(...collect(child.rule.children as FeatureChild[], background, offset));
  }
  return out;
}

/** The scenarios of the criteria; a `Feature:` line is supplied when the criteria start at `Scenario:`. */
export function readScenarios(criteria: string, featureName: string): { scenarios: ConcreteScenario[] } | { error: string } {
  const hasFeature = /^\s*Feature\s*:/m.test(criteria);
  const source = hasFeature ? criteria : `Feature: ${featureName.replace(/\n/g, " ")}\n${criteria}`;
  const offset = hasFeature ? 0 : 1;
  try {
    const doc = new Parser(new AstBuilder(IdGenerator.incrementing()), new GherkinClassicTokenMatcher()).parse(source);
    return { scenarios: doc.feature ? collect(doc.feature.children, [], offset) : [] };
  } catch (e) {
    // The parser's messages start with "(line:column)"; shift the line to the criteria as written.
    const message = (e as Error).message
      .replace(/^Parser errors:\s*/, "")
      .replace(/\s*\n\s*/g, "; ")
      .replace(/\((\d+):(\d+)\)/g, (_, l: string, c: string) => `(line ${Number(l) - offset}, column ${c})`);
    return { error: message };
  }
}
