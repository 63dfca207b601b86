// An http automation written as a Hurl file (Hurl 7's grammar: https://hurl.dev/docs/hurl-file.html): one entry per
// step, with its headers, [Query], [Options], body, then HTTP status, [Captures] and [Asserts].
import type { Assertion, HttpStep } from "../../manifest/automation-format";

type Operators = {
  equals?: unknown;
  not_equals?: unknown;
  contains?: unknown;
  matches?: string;
  exists?: boolean;
  type?: string;
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
};

/** A Hurl quoted string: `"` and `\` escaped, as are the control characters. */
export const quoted = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}"`;
/** A key or value string (headers, [Query], [Captures] names): `#` would start a comment, `\` escapes. */
const keyString = (s: string) => s.replace(/\\/g, "\\\\").replace(/#/g, "\\#").replace(/\n/g, "\\n");
const regex = (s: string) => `/${s.replace(/\//g, "\\/")}/`;

/** Exactly one `{{NAME}}`: svc keeps the variable's type, as Hurl does with an unquoted template. */
const LONE = /^\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}$/;

/** A predicate value: strings quoted, numbers/booleans/null as they are, a lone variable unquoted. */
function value(v: unknown): string {
  if (typeof v === "string") return LONE.test(v) ? v : quoted(v);
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v);
  return quoted(JSON.stringify(v));
}

const TYPES: Record<string, string> = { string: "isString", number: "isNumber", boolean: "isBoolean", object: "isCollection", array: "isCollection" };

/** The predicates of one operator set, each a line after `query`. */
function predicates(query: string, o: Operators): string[] {
  const out: string[] = [];
  if (o.equals !== undefined) out.push(`${query} == ${value(o.equals)}`);
  if (o.not_equals !== undefined) out.push(`${query} != ${value(o.not_equals)}`);
  // `contains` is Hurl's substring test; `includes` tests a collection's items.
  if (o.contains !== undefined) out.push(`${query} ${typeof o.contains === "string" ? "contains" : "includes"} ${value(o.contains)}`);
  if (o.matches !== undefined) out.push(`${query} matches ${regex(o.matches)}`);
  if (o.exists === true) out.push(`${query} exists`);
  if (o.exists === false) out.push(`${query} not exists`);
  if (o.type === "null") out.push(`${query} == null`);
  else if (o.type) out.push(`${query} ${TYPES[o.type]}`);
  if (o.gt !== undefined) out.push(`${query} > ${o.gt}`);
  if (o.gte !== undefined) out.push(`${query} >= ${o.gte}`);
  if (o.lt !== undefined) out.push(`${query} < ${o.lt}`);
  if (o.lte !== undefined) out.push(`${query} <= ${o.lte}`);
  return out;
}

/** A JSON path query; `.length` at the end becomes Hurl's `count` filter. */
function jsonQuery(path: string): string {
  const m = /^(.*)\.length$/.exec(path);
  return m ? `jsonpath ${quoted(m[1] as string)} count` : `jsonpath ${quoted(path)}`;
}

function assertLines(a: Assertion): string[] {
  const x = a as Record<string, unknown>;
  if ("status" in x) return typeof x.status === "number" ? [] : predicates("status", x.status as Operators);
  if ("header" in x) return predicates(`header ${quoted(String(x.header))}`, x as Operators);
  if ("json" in x) return predicates(jsonQuery(String(x.json)), x as Operators);
  if ("body" in x) return predicates("body", x.body as Operators);
  if ("duration_ms" in x) return predicates("duration", x.duration_ms as Operators);
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
  automation.steps.forEach((step, i) => {
    const r = step.request;
    if (step.name) lines.push(`# ${i + 1}. ${step.name.replace(/\n/g, " ")}`);
    const url =
      /^https?:\/\//i.test(r.url) || /^\{\{/.test(r.url) ? r.url : `${options.baseUrl.replace(/\/+$/, "")}${r.url.startsWith("/") ? "" : "/"}${r.url}`;
    lines.push(`${r.method} ${w(url)}`);
    const headers = { ...(r.headers ?? {}) };
    if (r.json !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) headers["Content-Type"] = "application/json";
    for (const [k, v] of Object.entries(headers)) lines.push(`${keyString(k)}: ${keyString(w(v))}`);
    if (r.query && Object.keys(r.query).length) {
      lines.push("[Query]");
      for (const [k, v] of Object.entries(r.query)) lines.push(`${keyString(k)}: ${keyString(w(String(v)))}`);
    }
    const opts: string[] = [];
    if (r.follow_redirects !== false) opts.push("location: true");
    if (opts.length) lines.push("[Options]", ...opts);
    if (r.timeout_ms !== undefined) lines.push(`# timeout_ms ${r.timeout_ms}: give hurl --max-time`);
    // A JSON value that is one variable stays quoted: Hurl sends it as a string (svc would keep a number a number).
    if (r.json !== undefined) lines.push(JSON.stringify(writeJson(r.json), null, 2));
    else if (r.body !== undefined) {
      const body = w(r.body);
      if (!body.includes("```")) lines.push("```", ...body.split("\n"), "```");
      else lines.push(`${quoted(body).replace(/^"/, "`").replace(/"$/, "`")}`);
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
        lines.push(`${name}: ${header !== undefined ? `header ${quoted(header)}` : jsonQuery(json as string)}`);
      }
    }
    const asserts = expect.flatMap(assertLines);
    if (asserts.length) lines.push("[Asserts]", ...asserts);
    lines.push("");
  });
  return lines.join("\n");
}
