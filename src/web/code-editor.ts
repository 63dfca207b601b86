// The steps editor's text area: CodeMirror 6 in JSON or YAML, with line numbers, Tab to indent, completion of the
// field names (and choices) the automation format's JSON Schema allows where the cursor is, and each problem — the
// format's checks as typed, the server's 400 details after a save — marked inline at the field its path names.
import { autocompletion, type Completion, type CompletionContext, type CompletionResult, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { json } from "@codemirror/lang-json";
import { yaml } from "@codemirror/lang-yaml";
import { bracketMatching, defaultHighlightStyle, ensureSyntaxTree, indentOnInput, syntaxHighlighting, syntaxTree } from "@codemirror/language";
import { type Diagnostic, lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers } from "@codemirror/view";
import type { SyntaxNode } from "@lezer/common";
import { isMap, isScalar, isSeq, parseDocument } from "yaml";

export type StepsFormat = "json" | "yaml";
export interface Problem {
  /** "steps.0.request.url" (a server detail's "body." is dropped), or "(JSON)" / "(YAML)" for the text itself. */
  path: string;
  message: string;
  /** For a problem of the text itself: the offset the parser stopped at, marked there. */
  at?: number;
}
type JsonSchema = { [k: string]: unknown };

export interface StepsEditorHandle {
  /** Replaces the text (a format switch, a reload). */
  setText(text: string, format: StepsFormat): void;
  setProblems(problems: Problem[]): void;
  focus(): void;
  destroy(): void;
}

const VALUE_NODES = new Set(["Object", "Array", "String", "Number", "True", "False", "Null"]);

const segmentsOf = (path: string): string[] =>
  path
    .replace(/^body\./, "")
    .split(".")
    .filter((s) => s !== "")
    .slice(1);

/** The range of the deepest JSON node a path reaches: the field named, or the object lacking it. */
function jsonRange(state: EditorState, segments: string[]): { from: number; to: number } {
  // The whole document parsed (a short one at once), not just what the incremental parser has reached.
  let node: SyntaxNode | null = (ensureSyntaxTree(state, state.doc.length, 500) ?? syntaxTree(state)).topNode.firstChild;
  while (node && !VALUE_NODES.has(node.name)) node = node.nextSibling;
  if (!node) return { from: 0, to: state.doc.length };
  let range = { from: node.from, to: node.to };
  for (const seg of segments) {
    let next: SyntaxNode | null = null;
    if (node.name === "Array" && /^\d+$/.test(seg)) {
      let i = 0;
      for (let c: SyntaxNode | null = node.firstChild; c; c = c.nextSibling) {
        if (!VALUE_NODES.has(c.name)) continue;
        if (i++ === Number(seg)) {
          next = c;
          break;
        }
      }
      if (next) range = { from: next.from, to: next.to };
    } else if (node.name === "Object") {
      for (let c: SyntaxNode | null = node.firstChild; c; c = c.nextSibling) {
        if (c.name !== "Property") continue;
        const name = c.getChild("PropertyName");
        if (name && state.sliceDoc(name.from + 1, name.to - 1) === seg) {
          range = { from: c.from, to: c.to };
          next = c.lastChild && VALUE_NODES.has(c.lastChild.name) ? c.lastChild : null;
          break;
        }
      }
    }
    if (!next) break;
    node = next;
  }
  return range;
}

/** The same for YAML, through the yaml package's node ranges. */
function yamlRange(text: string, segments: string[]): { from: number; to: number } {
  const doc = parseDocument(text);
  let node: unknown = doc.contents;
  let range = { from: 0, to: text.length };
  for (const seg of segments) {
    let next: unknown = null;
    if (isSeq(node) && /^\d+$/.test(seg)) next = node.items[Number(seg)];
    else if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === seg);
      if (pair) {
        const k = pair.key as { range?: [number, number, number] };
        const v = pair.value as { range?: [number, number, number] } | null;
        range = { from: k.range?.[0] ?? range.from, to: v?.range?.[1] ?? k.range?.[1] ?? range.to };
        node = pair.value;
        continue;
      }
    }
    const r = (next as { range?: [number, number, number] } | null)?.range;
    if (!next || !r) break;
    range = { from: r[0], to: r[1] };
    node = next;
  }
  return range;
}

// ---- completion from the JSON Schema ----

function deref(root: JsonSchema, s: JsonSchema): JsonSchema {
  const ref = s.$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) {
    const target = ref
      .slice(2)
      .split("/")
      .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], root);
    return target && typeof target === "object" ? deref(root, target as JsonSchema) : s;
  }
  return s;
}

/** The schema alternatives a value may be: anyOf / oneOf / allOf flattened. */
function alternatives(root: JsonSchema, s: JsonSchema): JsonSchema[] {
  const d = deref(root, s);
  const options = [...((d.anyOf as JsonSchema[]) ?? []), ...((d.oneOf as JsonSchema[]) ?? []), ...((d.allOf as JsonSchema[]) ?? [])];
  return options.length > 0 ? options.flatMap((o) => alternatives(root, o)) : [d];
}

function schemasAt(root: JsonSchema, segments: string[]): JsonSchema[] {
  let current = alternatives(root, root);
  for (const seg of segments) {
    current = current.flatMap((s) => {
      if (/^\d+$/.test(seg) && s.items && typeof s.items === "object") return alternatives(root, s.items as JsonSchema);
      const props = s.properties as Record<string, JsonSchema> | undefined;
      if (props?.[seg]) return alternatives(root, props[seg]);
      if (s.additionalProperties && typeof s.additionalProperties === "object") return alternatives(root, s.additionalProperties as JsonSchema);
      return [];
    });
  }
  return current;
}

/** The path from the document's top to a JSON node (array indexes and property names). */
function pathTo(state: EditorState, node: SyntaxNode): string[] {
  const out: string[] = [];
  let child: SyntaxNode = node;
  for (let p = node.parent; p; child = p, p = p.parent) {
    if (p.name === "Property") {
      const name = p.getChild("PropertyName");
      if (name && child !== name) out.unshift(state.sliceDoc(name.from + 1, name.to - 1));
    } else if (p.name === "Array") {
      let i = 0;
      for (let c = p.firstChild; c && c.from < child.from; c = c.nextSibling) if (VALUE_NODES.has(c.name)) i++;
      out.unshift(String(i));
    }
  }
  return out;
}

function schemaCompletion(schema: JsonSchema) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const tree = syntaxTree(ctx.state);
    const node = tree.resolveInner(ctx.pos, -1);
    const word = ctx.matchBefore(/"?[\w$.-]*/);
    // A field name: in an object, between its fields, or in the name being typed (a string not yet a property).
    let object: SyntaxNode | null = null;
    if (node.name === "Object") object = node;
    else if (node.name === "PropertyName") object = node.parent?.parent ?? null;
    else if (node.parent?.name === "Object" && node.name !== "Property") object = node.parent;
    if (object) {
      const present = new Set<string>();
      for (let c = object.firstChild; c; c = c.nextSibling) {
        const n = c.name === "Property" ? c.getChild("PropertyName") : null;
        if (n && !(ctx.pos >= n.from && ctx.pos <= n.to)) present.add(ctx.state.sliceDoc(n.from + 1, n.to - 1));
      }
      const names = new Map<string, string | undefined>();
      for (const s of schemasAt(schema, pathTo(ctx.state, object))) {
        for (const [k, v] of Object.entries((s.properties as Record<string, JsonSchema>) ?? {})) if (!present.has(k)) names.set(k, v.description as string);
      }
      if (names.size === 0) return null;
      // A name typed with its opening quote is matched with it (and the quote replaced along with the rest); the
      // list shows the bare name either way.
      const quoted = word?.text.startsWith('"') ?? false;
      const options: Completion[] = [...names].map(([name, info]) => ({
        label: quoted ? `"${name}` : name,
        displayLabel: name,
        type: "property",
        info,
        apply: `"${name}": `,
      }));
      return { from: word ? word.from : ctx.pos, options, validFor: /^"?[\w$.-]*$/ };
    }
    // A value with choices (a method, a state): offer them.
    const property = node.name === "String" && node.parent?.name === "Property" ? node.parent : null;
    if (property) {
      const choices = new Set<string>();
      for (const s of schemasAt(schema, pathTo(ctx.state, node))) for (const v of (s.enum as unknown[]) ?? []) if (typeof v === "string") choices.add(v);
      if (choices.size === 0) return null;
      return { from: node.from, options: [...choices].map((c) => ({ label: JSON.stringify(c), type: "enum" })) };
    }
    return null;
  };
}

export function createStepsEditor(
  parent: HTMLElement,
  opts: { text: string; format: StepsFormat; label: string; schema: JsonSchema; onChange: (text: string) => void },
): StepsEditorHandle {
  let problems: Problem[] = [];
  let format = opts.format;
  const diagnostics = (view: EditorView): Diagnostic[] =>
    problems.map((p) => {
      const text = view.state.doc.toString();
      const segs = p.path.startsWith("(") ? null : segmentsOf(p.path);
      // An unknown field is marked at its own key, not over the whole object that holds it.
      const unknown = /^unknown fields? "([^"]+)"/.exec(p.message)?.[1];
      if (segs && unknown) segs.push(unknown);
      const at = p.at === undefined ? 0 : Math.max(0, Math.min(p.at, text.length - 1));
      const r = segs === null ? { from: at, to: Math.min(text.length, at + 1) } : format === "json" ? jsonRange(view.state, segs) : yamlRange(text, segs);
      return { from: r.from, to: Math.max(r.to, r.from), severity: "error", message: `${p.path}: ${p.message}`, source: "svc" };
    });
  const extensions = (f: StepsFormat) => [
    lineNumbers(),
    history(),
    bracketMatching(),
    indentOnInput(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    f === "json" ? json() : yaml(),
    EditorState.tabSize.of(2),
    keymap.of([indentWithTab, ...completionKeymap, ...defaultKeymap, ...historyKeymap]),
    autocompletion(f === "json" ? { override: [schemaCompletion(opts.schema)] } : {}),
    lintGutter(),
    EditorView.contentAttributes.of({ "aria-label": opts.label, "aria-multiline": "true", spellcheck: "false" }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) opts.onChange(u.state.doc.toString());
    }),
  ];
  const view = new EditorView({ parent, state: EditorState.create({ doc: opts.text, extensions: extensions(format) }) });
  // The scrolling area itself takes the keyboard too, so a long step list scrolls without a pointer.
  view.scrollDOM.tabIndex = 0;
  return {
    setText(text, f) {
      format = f;
      view.setState(EditorState.create({ doc: text, extensions: extensions(f) }));
      view.dispatch(setDiagnostics(view.state, diagnostics(view)));
    },
    setProblems(next) {
      // Marked at once; later edits move the marks along until the next check replaces them.
      problems = next;
      view.dispatch(setDiagnostics(view.state, diagnostics(view)));
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
