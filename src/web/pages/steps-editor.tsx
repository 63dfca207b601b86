// The steps editor: JSON in a text area, checked against the automation format as it is typed, with each
// schema error shown beside its path; the server checks again on save.
import { useMemo } from "preact/hooks";
import { z } from "zod";
import { Step, stepKindProblems } from "../../manifest/automation-format";
import type { Automation } from "../types";
import { inputValue } from "../ui";

const Steps = z.array(Step).min(1, "an automation needs at least one step").max(500);

export interface StepsCheck {
  steps: z.output<typeof Steps> | null;
  problems: { path: string; message: string }[];
}

export function checkSteps(text: string, kind: Automation["kind"]): StepsCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { steps: null, problems: [{ path: "(JSON)", message: (e as Error).message }] };
  }
  const parsed = Steps.safeParse(value);
  if (!parsed.success) {
    return { steps: null, problems: parsed.error.issues.slice(0, 20).map((i) => ({ path: ["steps", ...i.path.map(String)].join("."), message: i.message })) };
  }
  const kindProblems = stepKindProblems(kind, parsed.data);
  return { steps: kindProblems.length ? null : parsed.data, problems: kindProblems };
}

export function StepsEditor({ text, kind, onChange }: { text: string; kind: Automation["kind"]; onChange: (text: string) => void }) {
  const check = useMemo(() => checkSteps(text, kind), [text, kind]);
  return (
    <div class="stack">
      <label class="field">
        <span class="field-label">Steps (JSON)</span>
        <textarea
          class="mono editor"
          rows={16}
          spellcheck={false}
          value={text}
          onInput={(e) => onChange(inputValue(e))}
          aria-invalid={check.problems.length > 0}
        />
      </label>
      {check.problems.length === 0 ? (
        <p class="ok-line" data-testid="steps-valid">
          ✓ {check.steps?.length} valid step{check.steps?.length === 1 ? "" : "s"}
        </p>
      ) : (
        <ul class="problems" data-testid="steps-problems">
          {check.problems.map((p) => (
            <li key={p.path + p.message}>
              <code>{p.path}</code> {p.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
