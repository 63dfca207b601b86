// An http automation written as a Hurl file (Hurl 7's grammar: https://hurl.dev/docs/hurl-file.html): one entry per
// step, with its headers, [Query], [Options], body, then HTTP status, [Captures] and [Asserts].
import type { Assertion, HttpStep } from "../../manifest/automation-format";
import { parseJsonPath } from "../../manifest/json-path";
import type { Operators } from "./operators";

/** A Hurl quoted string: `"` and `\` escaped, as are the control characters. */
export const quoted = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}"`;
/** A oneline body string (backquoted): sent exactly as written, its own newline excluded. */
const oneline = (s: string) => `\`${s.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}\``;
/** A `{{NAME}}` template, kept as it is where Hurl reads templates (keys and values alike). */
const TEMPLATE = /(\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\})/;
const KEY_ESCAPES: Record<string, string> = {
  "#": "\\#",
  ":": "\\:",
  "\\": "\\\\",
  "/": "\\/",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};
/**
 * A key as Hurl's key-string reads it (header names, [Query] keys): letters, digits and `_ - . [ ] @ $` as they are
 * (a leading `[` would start a section), `# : \ /` and control characters backslashed, anything else (a space,
 * `=`, `&` …) as `\u{hex}`; `{{NAME}}` templates kept.
 */
export const keyString = (s: string) =>
  s
    .split(TEMPLATE)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : [...part]
            .map((c, j) => {
              if (KEY_ESCAPES[c] !== undefined) return KEY_ESCAPES[c];
              if (/^[\p{L}\p{N}_\-.@$\]]$/u.test(c) || (c === "[" && (i > 0 || j > 0))) return c;
              return `\\u{${(c.codePointAt(0) as number).toString(16)}}`;
            })
            .join(""),
    )
    .join("");
const regex = (s: string) => `/${s.replace(/\//g, "\\/")}/`;
/**
 * A value string (headers, [Query] values): `#` would start a comment, `\` escapes, as do control characters; Hurl
 * trims the spaces around a value, so those are `\u{20}`.
 */
const valueString = (s: string) =>
  s
    .replace(/\\/g, "\\\\")
    .replace(/#/g, "\\#")
    .replace(/\n/g, "\\n")
    .replace(/\r/g, "\\r")
    .replace(/\t/g, "\\t")
    .replace(/^ +| +$/g, (m) => "\\u{20}".repeat(m.length));
/**
 * A [Query] key: Hurl URL-encodes a query's values but sends its keys as they are, so a key is percent-encoded here
 * (as svc's runner encodes it), its templates kept.
 */
const queryKey = (s: string) =>
  keyString(
    s
      .split(TEMPLATE)
      .map((part, i) => (i % 2 === 1 ? part : [...part].map((c) => (/^[A-Za-z0-9\-_.~[\]@$:/?]$/.test(c) ? c : encodeURIComponent(c))).join("")))
      .join(""),
  );

/** Exactly one `{{NAME}}`: svc keeps the variable's type, as Hurl does with an unquoted template. */
const LONE = /^\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}$/;

/**
 * A predicate value: strings quoted, numbers/booleans/null as they are, a lone variable unquoted — except against
 * text (a header, the body), where svc compares the variable's text: `"{{NAME}}"`.
 */
function value(v: unknown, text = false): string {
  if (typeof v === "string") return LONE.test(v) && !text ? v : quoted(v);
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v);
  return quoted(JSON.stringify(v));
}

// Hurl 7's type predicates: a JSON array is a list, an object an object (svc's `type` tells the two apart too).
const TYPES: Record<string, string> = { string: "isString", number: "isNumber", boolean: "isBoolean", object: "isObject", array: "isList" };

/** A query as Hurl reads it: a JSON path and the filters after it (`count` for svc's `.length`). */
interface Query {
  kind: "json" | "text" | "other";
  path?: string;
  filters?: string;
  /** The query text with its filters. */
  text: string;
}

/**
 * A JSON path in the form Hurl's JSONPath reads: from svc's parsed path (a bare `id` is `$.id`), with names that are
 * not identifiers bracketed; a final `.length` becomes Hurl's `count` filter.
 */
function jsonPathText(path: string): { path: string; count: boolean } {
  const segments = parseJsonPath(path);
  const last = segments[segments.length - 1];
  // After a wildcard, svc's `.length` is each item's length: no single count says that.
  const count = last !== undefined && "key" in last && last.key === "length" && !segments.some((s) => "all" in s);
  const parts = (count ? segments.slice(0, -1) : segments).map((s) => ("all" in s ? "[*]" : "index" in s ? `[${s.index}]` : member(s.key)));
  return { path: `$${parts.join("")}`, count };
}

/** `.name`, or `['name']` for a name that is not an identifier. */
const member = (key: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `['${key.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}']`);

function jsonQuery(path: string): Query {
  const p = jsonPathText(path);
  return { kind: "json", path: p.path, filters: p.count ? " count" : "", text: `jsonpath ${quoted(p.path)}${p.count ? " count" : ""}` };
}

/** Deep equality as Hurl can say it: scalars compared as they are, lists by count and item, objects by key count and key. */
function equalsLines(q: Query, expected: unknown): string[] {
  if (q.kind === "json" && q.filters === "" && expected !== null && typeof expected === "object") {
    const base = q.path as string;
    const at = (suffix: string): Query => ({ kind: "json", path: `${base}${suffix}`, filters: "", text: `jsonpath ${quoted(`${base}${suffix}`)}` });
    // A wildcard's matches are a collection of their own: its items are taken with `nth`, not by indexing the path.
    const item = (i: number): Query =>
      base.includes("[*]") ? { kind: "json", path: base, filters: ` nth ${i}`, text: `jsonpath ${quoted(base)} nth ${i}` } : at(`[${i}]`);
    if (Array.isArray(expected)) return [`jsonpath ${quoted(base)} count == ${expected.length}`, ...expected.flatMap((x, i) => equalsLines(item(i), x))];
    const entries = Object.entries(expected as Record<string, unknown>);
    return [
      `jsonpath ${quoted(base)} isObject`,
      `jsonpath ${quoted(`${base}.*`)} count == ${entries.length}`,
      ...entries.flatMap(([k, x]) => equalsLines(at(member(k)), x)),
    ];
  }
  return [`${q.text} == ${value(expected, q.kind === "text")}`];
}

/** The predicates of one operator set, each a line after the query. */
function predicates(q: Query, o: Operators): string[] {
  const out: string[] = [];
  const query = q.text;
  const notExported = (what: string) => `# not exported (Hurl has no counterpart): ${query} ${what}`;
  if (o.equals !== undefined) out.push(...equalsLines(q, o.equals));
  if (o.not_equals !== undefined) {
    if (o.not_equals !== null && typeof o.not_equals === "object") out.push(notExported(`!= ${JSON.stringify(o.not_equals).slice(0, 200)}`));
    else out.push(`${query} != ${value(o.not_equals, q.kind === "text")}`);
  }
  // Hurl 7's `contains` is a substring test on a string and an item test on a list, as svc's is.
  if (o.contains !== undefined) out.push(`${query} contains ${value(o.contains, q.kind === "text")}`);
  if (o.matches !== undefined) out.push(`${query} matches ${regex(o.matches)}`);
  if (o.exists === true) out.push(`${query} exists`);
  if (o.exists === false) out.push(`${query} not exists`);
  if (o.type === "null") out.push(`${query} == null`);
  else if (o.type) out.push(`${query} ${TYPES[o.type]}`);
  // svc compares a number written as text (a header, the body) as a number: Hurl needs the toFloat filter for that.
  const numeric = q.kind === "text" ? `${query} toFloat` : query;
  if (o.gt !== undefined) out.push(`${numeric} > ${o.gt}`);
  if (o.gte !== undefined) out.push(`${numeric} >= ${o.gte}`);
  if (o.lt !== undefined) out.push(`${numeric} < ${o.lt}`);
  if (o.lte !== undefined) out.push(`${numeric} <= ${o.lte}`);
  return out;
}

function assertLines(a: Assertion): string[] {
  const x = a as Record<string, unknown>;
  if ("status" in x) return typeof x.status === "number" ? [] : predicates({ kind: "other", text: "status" }, x.status as Operators);
  if ("header" in x) return predicates({ kind: "text", text: `header ${quoted(String(x.header))}` }, x as Operators);
  if ("json" in x) return predicates(jsonQuery(String(x.json)), x as Operators);
  if ("body" in x) return predicates({ kind: "text", text: "body" }, x.body as Operators);
  if ("duration_ms" in x) return predicates({ kind: "other", text: "duration" }, x.duration_ms as Operators);
  return [`# not exported (Hurl has no counterpart): ${JSON.stringify(a).replace(/\n/g, " ").slice(0, 300)}`];
}

export interface HurlOptions {
  /** The URL a relative one is joined to: BASE_URL's value, or `{{BASE_URL}}`. */
  baseUrl: string;
  /** Variables written in as values (an environment's variables); other `{{NAME}}`s stay Hurl variables. */
  variables: Record<string, string>;
}

function writeIn(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g, (_m, name: string) => vars[name] ?? `{{${name}}}`);
}

const ABSOLUTE_URL = /^[a-z][a-z0-9+.-]*:\/\//i;
const LEADING_VARIABLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/;
/** The start of a relative URL (never matches `scheme://`): its leading slashes, then its first segment. */
const RELATIVE_START = "^/*([^:/?#]*(?:[/?#]|$))";

export function toHurl(automation: { name: string; steps: HttpStep[] }, options: HurlOptions): string {
  const lines: string[] = [`# ${automation.name.replace(/\n/g, " ")}`, "# Exported from svc: run it with `hurl --test FILE` (Hurl 7).", ""];
  const vars = options.variables;
  const w = (s: string) => writeIn(s, vars);
  const writeJson = (v: unknown): unknown => {
    if (typeof v === "string") return w(v);
    if (Array.isArray(v)) return v.map(writeJson);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, writeJson(x)]));
    return v;
  };
  const base = options.baseUrl.replace(/\/+$/, "");
  // svc joins a relative URL to BASE_URL when the step runs, after its variables are filled in; Hurl refuses a
  // relative URL ("Missing scheme"). A URL that starts with a captured value (a Location header's `/items/7`) is
  // sent as a second capture of the same value, made absolute as svc makes it: `NAME__url`.
  const capturedBy = (name: string, before: number) => automation.steps.slice(0, before).some((s) => Object.hasOwn(s.capture ?? {}, name));
  const urlCaptures = new Set<string>();
  const requestUrl = (raw: string, i: number): { text: string; note?: string } => {
    const written = w(raw);
    if (ABSOLUTE_URL.test(written)) return { text: written };
    const lead = LEADING_VARIABLE.exec(written);
    if (!lead) return { text: w(`${base}${written.startsWith("/") ? "" : "/"}${written}`) };
    const name = lead[1] as string;
    if (name === "BASE_URL") return { text: written };
    if (capturedBy(name, i)) {
      urlCaptures.add(name);
      return { text: `{{${name}__url}}${written.slice(lead[0].length)}` };
    }
    return { text: written, note: `# {{${name}}} must be an absolute URL for Hurl: svc would join a relative one to BASE_URL, Hurl refuses it` };
  };
  // Known before the captures are written: the steps' URLs are read first.
  automation.steps.forEach((step, i) => {
    requestUrl(step.request.url, i);
  });
  automation.steps.forEach((step, i) => {
    const r = step.request;
    if (step.name) lines.push(`# ${i + 1}. ${step.name.replace(/\n/g, " ")}`);
    const url = requestUrl(r.url, i);
    if (url.note) lines.push(url.note);
    lines.push(`${r.method} ${url.text}`);
    const headers = { ...(r.headers ?? {}) };
    if (r.json !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) headers["Content-Type"] = "application/json";
    for (const [k, v] of Object.entries(headers)) lines.push(`${keyString(k)}: ${valueString(w(v))}`);
    if (r.query && Object.keys(r.query).length) {
      lines.push("[Query]");
      for (const [k, v] of Object.entries(r.query)) lines.push(`${queryKey(k)}: ${valueString(w(String(v)))}`);
    }
    const opts: string[] = [];
    if (r.follow_redirects !== false) opts.push("location: true");
    if (opts.length) lines.push("[Options]", ...opts);
    if (r.timeout_ms !== undefined) lines.push(`# timeout_ms ${r.timeout_ms}: give hurl --max-time`);
    // A JSON value that is one variable stays quoted: Hurl sends it as a string (svc would keep a number a number).
    if (r.json !== undefined) lines.push(JSON.stringify(writeJson(r.json), null, 2));
    else if (r.body !== undefined) {
      // A multiline block sends its last line's newline too: only a body that ends with one is written that way.
      const body = w(r.body);
      if (body.endsWith("\n") && !body.includes("```")) lines.push("```", ...body.slice(0, -1).split("\n"), "```");
      else lines.push(oneline(body));
    }
    const expect = step.expect ?? [];
    const status = expect.find((a): a is { status: number } => "status" in a && typeof (a as { status: unknown }).status === "number");
    lines.push(`HTTP ${status ? status.status : "*"}`);
    const captures = Object.entries(step.capture ?? {});
    if (captures.length) {
      lines.push("[Captures]");
      for (const [name, c] of captures) {
        const header = typeof c === "string" ? (c.toLowerCase().startsWith("header:") ? c.slice(7).trim() : undefined) : "header" in c ? c.header : undefined;
        const json = typeof c === "string" ? (header === undefined ? c : undefined) : "json" in c ? c.json : undefined;
        const query = header !== undefined ? `header ${quoted(header)}` : jsonQuery(json as string).text;
        lines.push(`${name}: ${query}`);
        // A relative value joined to BASE_URL (its leading slashes dropped), an absolute one left as it is.
        if (urlCaptures.has(name)) lines.push(`${name}__url: ${query} replaceRegex ${regex(RELATIVE_START)} ${quoted(`${base.replace(/\$/g, "$$$$")}/$1`)}`);
      }
    }
    const asserts = expect.flatMap(assertLines);
    if (asserts.length) lines.push("[Asserts]", ...asserts);
    lines.push("");
  });
  return lines.join("\n");
}
