// Reading applied documents: YAML or JSON text parsed with positions, so every problem names its file and line.
import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document, type YAMLError } from "yaml";
import { z } from "zod";
import { ops } from "../../manifest";
import { type ErrorDetail, explainIssues } from "../../manifest/errors";
import { Description, hasControlCharacters, Name, NO_CONTROL_CHARACTERS, Tag, WITHOUT_CONTROL_CHARACTERS } from "../../manifest/define";
import { jsonSyntaxError } from "./json-syntax";
import { targetKindsProblem } from "../../manifest/schedule-records";

/**
 * An automation: create_automation's body, and the quarantine update_automation sets (a record's own setting that a
 * copy of the project must keep).
 */
const AutomationDoc = (ops.createAutomation.body as NonNullable<typeof ops.createAutomation.body>).safeExtend(
  (ops.updateAutomation.body as NonNullable<typeof ops.updateAutomation.body>).pick({ quarantined: true }).shape,
);
export type AutomationBody = z.output<typeof AutomationDoc>;

/** A record's identity within the project; `svc pull` may make it a file's path, so never with a control character. */
const Key = z.string().trim().min(1).max(1000).regex(WITHOUT_CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS);
const GroupDoc = z.strictObject({
  type: z.literal("group"),
  key: Key.optional(),
  name: Name,
  description: Description.optional(),
  automations: z.array(Key).max(1000).default([]).describe("Keys of the automations, in order"),
  // How its runs go, checked as create_group checks them.
  ...(ops.createGroup.body as NonNullable<typeof ops.createGroup.body>).pick({ mode: true, stop_on_failure: true }).shape,
});
const VariableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "the name of an environment variable of the machine running svc apply");
const EnvironmentDoc = z.strictObject({
  type: z.literal("environment"),
  key: Key.optional(),
  name: Name,
  variables: z.record(z.string().min(1).max(200), z.string().max(100_000)).default({}),
  secrets: z.record(z.string().min(1).max(200), VariableName).default({}),
  // Protection and runner routing, checked as create_environment checks them (who may set them: see apply/operations.ts).
  ...(ops.createEnvironment.body as NonNullable<typeof ops.createEnvironment.body>).pick({ protected: true, allowed_hosts: true, runner_labels: true }).shape,
});
/** A schedule: create_schedule's body, its target naming an automation or group by key (or exact name), or tags. */
const ScheduleDoc = (ops.createSchedule.body as NonNullable<typeof ops.createSchedule.body>).extend({
  type: z.literal("schedule"),
  key: Key.optional(),
  target: z.preprocess(
    (value: unknown, ctx) => {
      const problem = targetKindsProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
      return value;
    },
    z.union([z.strictObject({ automation: Key.max(200) }), z.strictObject({ group: Key.max(200) }), z.strictObject({ tags: z.array(Tag).min(1).max(50) })]),
  ),
});
/** An alert channel: create_alert_channel's body, its secrets (webhook secret, Slack URL) named by environment variable. */
const AlertChannelDoc = (ops.createAlertChannel.body as NonNullable<typeof ops.createAlertChannel.body>).omit({ secret: true }).extend({
  type: z.literal("alert_channel"),
  key: Key.optional(),
  secret_from: VariableName.optional().describe("webhook: the environment variable holding the signing secret"),
  url_from: VariableName.optional().describe("the environment variable holding the URL (a Slack webhook URL is a secret)"),
});
export type ScheduleBody = z.output<typeof ScheduleDoc>;
export type AlertChannelBody = z.output<typeof AlertChannelDoc>;

/** A document as read: `lines` says where its values are (plain data, as it crosses threads), `line` reads it. */
interface Read {
  key: string;
  path: string;
  lines: LineTable;
  line: (p: PropertyKey[]) => number;
}
export type Parsed =
  | (Read & { type: "automation"; adopt?: string; body: AutomationBody })
  | (Read & { type: "group"; body: z.output<typeof GroupDoc> })
  | (Read & { type: "environment"; body: z.output<typeof EnvironmentDoc> })
  | (Read & { type: "schedule"; body: ScheduleBody })
  | (Read & { type: "alert_channel"; body: AlertChannelBody });

const DOCS = { group: GroupDoc, environment: EnvironmentDoc, schedule: ScheduleDoc, alert_channel: AlertChannelDoc } as const;
const TYPES = '"automation", "group", "environment", "schedule" or "alert_channel"';

/** Where each value of a document is: its path (keys and indexes joined by NUL) → its line (1-based). */
export type LineTable = Record<string, number>;

/**
 * Every value's line, read once from the parsed document: a plain table, so it crosses to the API's thread. A map's
 * entry is at its key's line: a block value (a nested map or list) starts on the line after it.
 */
function lineTable(doc: Document, counter: LineCounter): LineTable {
  const out: LineTable = {};
  const walk = (node: unknown, path: string, keyNode?: unknown) => {
    const at0 = isNode(keyNode) && keyNode.range ? keyNode.range[0] : isNode(node) && node.range ? node.range[0] : undefined;
    if (at0 !== undefined) out[path] = counter.linePos(at0).line;
    const at = (k: string) => (path === "" ? k : `${path}\u0000${k}`);
    if (isMap(node)) for (const pair of node.items) walk(pair.value ?? pair.key, at(isScalar(pair.key) ? String(pair.key.value) : String(pair.key)), pair.key);
    else if (isSeq(node))
      node.items.forEach((item, i) => {
        walk(item, at(String(i)));
      });
  };
  walk(doc.contents, "");
  return out;
}

/** The line of the value at `path`, else of the nearest enclosing value (1 when none is known). */
export function lineFrom(table: LineTable): (path: PropertyKey[]) => number {
  return (path) => {
    for (let n = path.length; n >= 0; n--) {
      const line = table[path.slice(0, n).map(String).join("\u0000")];
      if (line !== undefined) return line;
    }
    return 1;
  };
}

export const problemAt = (path: string, line: number, field: string, message: string): ErrorDetail => ({
  path: `${path}:${line}`,
  message: field ? `${field}: ${message}` : message,
});

/** Deeper than a test file ever is: refused before the parser spends seconds (and its stack) on it. */
export const MAX_DOCUMENT_DEPTH = 64;

/**
 * How deep the text nests, cheaply and before parsing: flow collections (`[`, `{`, outside quotes and comments)
 * and block indentation, each counted apart. An over-estimate at worst, never an under-estimate of what matters.
 */
export function nestingDepth(text: string): { depth: number; line: number } {
  let flow = 0;
  let worst = { depth: 0, line: 1 };
  let line = 1;
  const indents: number[] = [];
  let quote = "";
  let atLineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "\n") {
      line++;
      atLineStart = true;
      indent = 0;
      continue;
    }
    if (atLineStart) {
      if (c === " " || c === "-") {
        indent++;
        continue;
      }
      atLineStart = false;
      if (c !== "#") {
        while (indents.length > 0 && (indents[indents.length - 1] as number) >= indent) indents.pop();
        indents.push(indent);
        if (indents.length > worst.depth) worst = { depth: indents.length, line };
      }
    }
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
      continue;
    }
    // A quote opens a quoted scalar only where a scalar starts (an apostrophe inside plain text does not).
    if ((c === '"' || c === "'") && /^$|[\s:,[{-]$/.test(text[i - 1] ?? "")) quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1] as string))) {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else if (c === "[" || c === "{") {
      flow++;
      if (flow > worst.depth) worst = { depth: flow, line };
    } else if ((c === "]" || c === "}") && flow > 0) flow--;
  }
  return worst;
}

/**
 * A document that has problems of its own, as far as it says what it is: references to it are not problems too.
 * `type` and `name` are missing when it cannot be read that far.
 */
export interface Unread {
  key: string;
  type?: string;
  name?: string;
}

/**
 * What reading a folder comes to: its documents; or every problem by file and line, with the documents that could
 * be read (plain data: `line` is made again on the API's side) and what the others say of themselves, so that the
 * checks across documents and the project run too and every problem is told at once.
 */
export type ReadResult = { parsed: Parsed[] } | { message: string; problems: ErrorDetail[]; read: Omit<Parsed, "line">[]; unread: Unread[] };

/** What a document with problems says of itself: its key, and its type and name when it has them. */
function unreadOf(path: string, value: unknown): Unread {
  const v = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const type = v.type === undefined && typeof v.name === "string" ? "automation" : typeof v.type === "string" ? v.type : undefined;
  return {
    key: typeof v.key === "string" && v.key.trim() !== "" ? v.key.trim() : path,
    ...(type === undefined ? {} : { type }),
    ...(typeof v.name === "string" ? { name: v.name } : {}),
  };
}

/** The parser's error in the user's words: its advice on how to call the library is not for them. */
function parserMessage(e: YAMLError): string {
  if (e.code === "MULTIPLE_DOCS") return "a file holds one document: this one has another after `---`; put each in a file of its own";
  return e.message.split("\n")[0] ?? e.message;
}

/** What a document the parser found errors in still says (its type, key and name, often), if anything. */
function partialValue(doc: Document): unknown {
  try {
    return doc.toJS({ maxAliasCount: 0 });
  } catch {
    return undefined;
  }
}

/**
 * Reads every document (in the reader's own thread, see reader-worker.ts: parsing a large folder takes the better
 * part of a second, which the API's thread must not spend).
 */
export function readDocuments(documents: { path: string; text: string }[], defaultEnvironment: string | undefined): ReadResult {
  const problems: ErrorDetail[] = [];
  const out: Parsed[] = [];
  const unread: Unread[] = [];
  for (const d of documents) {
    const before = problems.length;
    // What the document holds, as far as it could be read: told with its problems.
    let seen: unknown;
    try {
      const nesting = nestingDepth(d.text);
      if (nesting.depth > MAX_DOCUMENT_DEPTH) {
        problems.push(problemAt(d.path, nesting.line, "", `nested deeper than ${MAX_DOCUMENT_DEPTH} levels: a document this deep is not a test`));
        continue;
      }
      const counter = new LineCounter();
      const doc = parseDocument(d.text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
      // A .json file is JSON: YAML would also take a trailing comma, comments or YAML itself. What it says of itself
      // is still read (as YAML), so that references to it are no second problem.
      const notJson = /\.json$/i.test(d.path) ? jsonSyntaxError(d.text.replace(/^\uFEFF/, "")) : null;
      if (notJson) {
        const line = d.text.slice(0, notJson.offset + (d.text.startsWith("\uFEFF") ? 1 : 0)).split("\n").length;
        problems.push(problemAt(d.path, line, "", `not valid JSON: ${notJson.message}`));
        seen = partialValue(doc);
        continue;
      }
      if (doc.errors.length > 0) {
        // Without pretty errors the parser gives the error's offset only: its line is counted here.
        for (const e of doc.errors) problems.push(problemAt(d.path, counter.linePos(e.pos[0]).line, "", parserMessage(e)));
        seen = partialValue(doc);
        continue;
      }
      if (!isMap(doc.contents)) {
        problems.push(
          problemAt(d.path, 1, "", "the file must hold one object (an automation, or a document with type: group | environment | schedule | alert_channel)"),
        );
        continue;
      }
      const lines = lineTable(doc, counter);
      const line = lineFrom(lines);
      let value: Record<string, unknown>;
      try {
        value = doc.toJS() as Record<string, unknown>;
        seen = value;
      } catch (e) {
        // The parser's own guard (an alias expanded too many times: a "billion laughs" document).
        problems.push(problemAt(d.path, 1, "", `cannot be read: ${(e as Error).message}`));
        continue;
      }
      const typeNode = doc.get("type", true);
      const type = isScalar(typeNode) ? typeNode.value : value.type;
      const report = (error: z.ZodError) => {
        // Explained as the API explains them (`expect.0.status: expected number or object, not string`), at the value's own line.
        // An unknown key at the key's own line, not its object's.
        for (const issue of explainIssues(error))
          problems.push(problemAt(d.path, line(issue.at ?? issue.path), issue.path.map(String).join("."), issue.message));
      };
      if (typeof type === "string" && Object.hasOwn(DOCS, type)) {
        const r = (DOCS[type as keyof typeof DOCS] as z.ZodType<Parsed["body"]>).safeParse(value);
        if (!r.success) report(r.error);
        else out.push({ type, key: (r.data as { key?: string }).key ?? d.path, path: d.path, lines, line, body: r.data } as Parsed);
        continue;
      }
      if (type !== undefined && type !== "automation") {
        problems.push(problemAt(d.path, line(["type"]), "type", `expected ${TYPES}`));
        continue;
      }
      const { type: _t, key, id, ...rest } = value;
      if (key !== undefined && (typeof key !== "string" || key.trim() === ""))
        problems.push(problemAt(d.path, line(["key"]), "key", "expected a non-empty string"));
      else if (typeof key === "string" && hasControlCharacters(key.trim())) problems.push(problemAt(d.path, line(["key"]), "key", NO_CONTROL_CHARACTERS));
      if (id !== undefined && typeof id !== "string") problems.push(problemAt(d.path, line(["id"]), "id", "expected a string"));
      if (defaultEnvironment !== undefined && rest.environment === undefined) rest.environment = defaultEnvironment;
      const r = AutomationDoc.safeParse(rest);
      if (!r.success) report(r.error);
      else
        out.push({
          type: "automation",
          key: typeof key === "string" ? key.trim() : d.path,
          path: d.path,
          lines,
          line,
          adopt: typeof id === "string" ? id : undefined,
          body: r.data,
        });
    } finally {
      if (problems.length > before) unread.push(unreadOf(d.path, seen));
    }
  }

  // One identity per record, and one name per automation within the folder.
  const byKey = new Map<string, Parsed>();
  const byName = new Map<string, Parsed>();
  for (const p of out) {
    const seen = byKey.get(`${p.type} ${p.key}`);
    if (seen) problems.push(problemAt(p.path, p.line(["key"]), "key", `the key "${p.key}" is also the key of ${seen.path}`));
    else byKey.set(`${p.type} ${p.key}`, p);
    const named = byName.get(`${p.type} ${p.body.name}`);
    if (named) problems.push(problemAt(p.path, p.line(["name"]), "name", `the ${p.type} name "${p.body.name}" is also used by ${named.path}`));
    else byName.set(`${p.type} ${p.body.name}`, p);
  }
  if (problems.length > 0)
    return {
      message: `${problems.length} problem${problems.length === 1 ? "" : "s"} in the documents`,
      problems,
      read: out.map(({ line: _, ...p }) => p),
      unread,
    };
  return { parsed: out };
}
