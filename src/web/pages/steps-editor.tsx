// The steps editor: a code editor (CodeMirror, loaded when first shown) in JSON or YAML, checked against the
// automation format as it is typed; each problem is marked at the line of the field it names and listed below, and
// so are the server's own 400 details after a save. The page keeps the steps as JSON text whichever format is shown.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { z } from "zod";
import { Step, stepKindProblems } from "../../manifest/automation-format";
import { zodDetails } from "../../manifest/errors";
import type { Problem, StepsEditorHandle, StepsFormat } from "../code-editor";
import type { Automation } from "../types";

const Steps = z.array(Step).min(1, "an automation needs at least one step").max(500);

export interface StepsCheck {
  steps: z.output<typeof Steps> | null;
  problems: Problem[];
}

export function checkSteps(text: string, kind: Automation["kind"]): StepsCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    // Browsers say where (V8: "… in JSON at position 123 (line 6 column 7)"): marked there, not on line 1.
    const at = /at position (\d+)/.exec(message)?.[1];
    return { steps: null, problems: [{ path: "(JSON)", message, ...(at !== undefined ? { at: Number(at) } : {}) }] };
  }
  const parsed = Steps.safeParse(value);
  if (!parsed.success) {
    // The server's own wording (zodDetails), so the editor says what a save would be told.
    return { steps: null, problems: zodDetails(parsed.error, "steps").slice(0, 20) };
  }
  const kindProblems = stepKindProblems(kind, parsed.data);
  return { steps: kindProblems.length ? null : parsed.data, problems: kindProblems };
}

/** The automation format as JSON Schema, for the editor's completion. */
let schema: Record<string, unknown> | null = null;
const stepsSchema = () => {
  schema ??= z.toJSONSchema(z.array(Step), { io: "input", unrepresentable: "any", reused: "inline" }) as Record<string, unknown>;
  return schema;
};

/** The server's details that are about the steps (a save's 400), as the editor's paths. */
const stepDetails = (details: { path: string; message: string }[]) =>
  details.filter((d) => /^(body\.)?steps(\.|$)/.test(d.path)).map((d) => ({ path: d.path.replace(/^body\./, ""), message: d.message }));

export function StepsEditor({
  text,
  kind,
  onChange,
  details = [],
}: {
  text: string;
  kind: Automation["kind"];
  onChange: (text: string) => void;
  /** The details of the last refused save: those naming steps are shown at their field. */
  details?: { path: string; message: string }[];
}) {
  const check = useMemo(() => checkSteps(text, kind), [text, kind]);
  const [format, setFormat] = useState<StepsFormat>("json");
  const [yamlProblem, setYamlProblem] = useState<Problem | null>(null);
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<StepsEditorHandle | null>(null);
  const emitted = useRef(text);
  const yamlLib = useRef<typeof import("yaml") | null>(null);
  const server = stepDetails(details);
  const problems: Problem[] = yamlProblem ? [yamlProblem] : [...check.problems, ...server];

  // The page's JSON shown in the chosen format.
  const shown = (json: string, f: StepsFormat) => {
    if (f === "json" || !yamlLib.current) return json;
    try {
      return yamlLib.current.stringify(JSON.parse(json));
    } catch {
      return json;
    }
  };
  const edited = (value: string) => {
    if (format === "yaml" && yamlLib.current) {
      try {
        const json = JSON.stringify(yamlLib.current.parse(value), null, 2) ?? "";
        setYamlProblem(null);
        emitted.current = json;
        onChange(json);
      } catch (e) {
        // The parser's first line says what and where ("… at line 6, column 1:", its code frame follows); pos is the offset.
        const first = ((e as Error).message.split("\n")[0] ?? "not valid YAML").replace(/:\s*$/, "");
        const at = (e as { pos?: [number, number] }).pos?.[0];
        setYamlProblem({ path: "(YAML)", message: first, ...(typeof at === "number" ? { at } : {}) });
        emitted.current = value;
        onChange(value);
      }
      return;
    }
    emitted.current = value;
    onChange(value);
  };
  const editedRef = useRef(edited);
  editedRef.current = edited;
  // A text from the page (an example for another kind, a reload) replaces the editor's; the editor's own edits coming
  // back as the prop do not. Told apart here, as the prop arrives: `emitted` is set before each edit is passed up, so
  // it is current now, whereas an effect runs later, after further keystrokes may have moved it on (comparing there
  // put an older text back into the editor while typing: the cursor jumped, keys were lost, completion closed).
  const seen = useRef(text);
  const fromPage = useRef<string | null>(null);
  if (text !== seen.current) {
    seen.current = text;
    fromPage.current = text === emitted.current ? null : text;
  }

  useEffect(() => {
    let gone = false;
    void Promise.all([import("../code-editor"), import("yaml")]).then(([m, y]) => {
      if (gone || !host.current) return;
      yamlLib.current = y;
      // The text as it is now (the page may have replaced it while the editor loaded).
      emitted.current = seen.current;
      fromPage.current = null;
      editor.current = m.createStepsEditor(host.current, {
        text: seen.current,
        format: "json",
        label: "Steps",
        schema: stepsSchema(),
        onChange: (v) => editedRef.current(v),
      });
      editor.current.setProblems(problems);
    });
    return () => {
      gone = true;
      editor.current?.destroy();
      editor.current = null;
    };
  }, []);
  useEffect(() => {
    const next = fromPage.current;
    if (next === null || !editor.current) return;
    fromPage.current = null;
    emitted.current = next;
    setYamlProblem(null);
    editor.current.setText(shown(next, format), format);
  }, [text]);
  useEffect(() => {
    editor.current?.setProblems(problems);
  }, [JSON.stringify(problems)]);

  const switchTo = (f: StepsFormat) => {
    if (f === format || yamlProblem) return;
    setFormat(f);
    editor.current?.setText(shown(text, f), f);
  };
  return (
    <div class="stack">
      <div class="field">
        <div class="row">
          <span class="field-label" id="steps-label">
            Steps
          </span>
          <div class="row" role="radiogroup" aria-label="Steps format">
            {(["json", "yaml"] as const).map((f) => (
              <label key={f} class="inline">
                <input type="radio" name="steps-format" checked={format === f} disabled={yamlProblem !== null} onChange={() => switchTo(f)} /> {f.toUpperCase()}
              </label>
            ))}
          </div>
        </div>
        <div class="code-editor" ref={host} data-testid="steps-editor" aria-invalid={problems.length > 0} />
      </div>
      {problems.length === 0 ? (
        <p class="ok-line" data-testid="steps-valid">
          ✓ {check.steps?.length} valid step{check.steps?.length === 1 ? "" : "s"}
        </p>
      ) : (
        <ul class="problems" data-testid="steps-problems">
          {problems.map((p) => (
            <li key={p.path + p.message}>
              <code>{p.path}</code> {p.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
