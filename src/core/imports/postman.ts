// A Postman collection (v2.1) read with the postman-collection package: folders become groups, variables an
// environment, each request an automation; the common test-script patterns become assertions.
import { Collection, ItemGroup } from "postman-collection";
import type { Assertion, HttpStep } from "../../manifest/automation-format";
import type { ImportedAutomation, ImportPlan } from "./save";

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
type Request = HttpStep["request"];
type Method = Request["method"];
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);

// One statement of a test script, as Postman's snippets write them. A value is a JSON literal or a quoted string.
const VALUE = String.raw`("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null)`;
const JSON_REF = String.raw`(?:pm\.response\.json\(\)|jsonData|responseJson|json|body|data|response)((?:\.[A-Za-z_$][\w$]*|\[\d+\]|\[(?:"[^"]*"|'[^']*')\])*)`;
const PATTERNS: [RegExp, (m: RegExpMatchArray) => Assertion | null][] = [
  [/^pm\.response\.to\.have\.status\((\d{3})\)$/, (m) => ({ status: Number(m[1]) })],
  [/^pm\.response\.to\.be\.ok$/, () => ({ status: { gte: 200, lt: 300 } })],
  [/^pm\.response\.to\.be\.success$/, () => ({ status: { gte: 200, lt: 300 } })],
  [/^pm\.response\.to\.(?:be\.json|have\.jsonBody\(\))$/, () => ({ header: "Content-Type", contains: "json" })],
  [/^pm\.expect\(pm\.response\.(?:code|status)\)\.to\.(?:eql|equal|equals|be\.equal)\((\d{3})\)$/, (m) => ({ status: Number(m[1]) })],
  [/^pm\.expect\(pm\.response\.code\)\.to\.be\.oneOf\(\[([\d\s,]+)\]\)$/, () => null],
  [/^pm\.response\.to\.have\.header\(("[^"]*"|'[^']*')\)$/, (m) => ({ header: unquote(m[1] as string), exists: true })],
  [
    new RegExp(String.raw`^pm\.response\.to\.have\.header\(("[^"]*"|'[^']*'),\s*${VALUE}\)$`),
    (m) => ({ header: unquote(m[1] as string), equals: literal(m[2] as string) as string }),
  ],
  [
    /^pm\.expect\(pm\.response\.responseTime\)\.to\.be\.(below|lessThan|above)\((\d+)\)$/,
    (m) => ({ duration_ms: m[1] === "above" ? { gt: Number(m[2]) } : { lt: Number(m[2]) } }),
  ],
  [
    new RegExp(String.raw`^pm\.expect\(pm\.response\.text\(\)\)\.to\.(?:include|contain)\(${VALUE}\)$`),
    (m) => ({ body: { contains: literal(m[1] as string) as string } }),
  ],
  [new RegExp(String.raw`^pm\.response\.to\.have\.body\(${VALUE}\)$`), (m) => ({ body: { equals: literal(m[1] as string) } })],
  [
    new RegExp(String.raw`^pm\.expect\(${JSON_REF}\)\.to\.(?:eql|equal|equals|be\.equal|deep\.equal)\(${VALUE}\)$`),
    (m) => ({ json: path(m[1] as string), equals: literal(m[2] as string) }),
  ],
  [
    new RegExp(String.raw`^pm\.expect\(${JSON_REF}\)\.to\.(?:include|contain)\(${VALUE}\)$`),
    (m) => ({ json: path(m[1] as string), contains: literal(m[2] as string) as string }),
  ],
  [new RegExp(String.raw`^pm\.expect\(${JSON_REF}\)\.to\.(?:exist|not\.be\.undefined|be\.ok)$`), (m) => ({ json: path(m[1] as string), exists: true })],
  [
    new RegExp(String.raw`^pm\.expect\(${JSON_REF}\)\.to\.be\.(?:an?)\(("[a-z]+"|'[a-z]+')\)$`),
    (m) => {
      const t = unquote(m[2] as string);
      return ["string", "number", "boolean", "object", "array", "null"].includes(t) ? { json: path(m[1] as string), type: t as "string" } : null;
    },
  ],
  [
    new RegExp(String.raw`^pm\.expect\(${JSON_REF}\.length\)\.to\.(?:eql|equal)\((\d+)\)$`),
    (m) => ({ json: `${path(m[1] as string)}.length`, equals: Number(m[2]) }),
  ],
];
// Lines that only frame the statements above.
const FRAME = [
  /^pm\.test\(.*,\s*(?:function\s*\(\)|\(\)\s*=>)\s*\{$/,
  /^\}\);?$/,
  /^(?:var|let|const)\s+(?:jsonData|responseJson|json|body|data|response)\s*=\s*pm\.response\.json\(\);?$/,
  /^\/\//,
  /^$/,
];

const unquote = (s: string) => (s.startsWith("'") ? JSON.parse(`"${s.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`) : JSON.parse(s)) as string;
const literal = (s: string): unknown => (s.startsWith("'") || s.startsWith('"') ? unquote(s) : JSON.parse(s));
const path = (ref: string) =>
  `$${ref.replace(/\[(?:"([^"]*)"|'([^']*)')\]/g, (_m, a: string | undefined, b: string | undefined) => `[${JSON.stringify(a ?? b)}]`)}`;

const TEST_START = /^\s*pm\.test\(/;
const TEST_HEAD = /,\s*(?:function\s*\(\)|\(\)\s*=>)\s*\{/g;
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * The statements of `pm.test("…", function () { a; b; });` on one line, as Postman's own snippets write it; null
 * for any other line. Read by hand, in time linear in the line: the one regular expression that says the same
 * (`pm.test(.*?, … {(.*)});`) backtracks over the whole line at every comma, and a long line of them held the
 * server for minutes.
 */
function oneLineTest(line: string): string[] | null {
  const start = TEST_START.exec(line);
  if (!start) return null;
  // The end: `}`, then `)` and an optional `;`, with only white space between and after.
  let end = line.trimEnd();
  if (end.endsWith(";")) end = end.slice(0, -1);
  if (!end.endsWith(")")) return null;
  end = end.slice(0, -1).trimEnd();
  if (!end.endsWith("}")) return null;
  const close = end.length - 1;
  // The first `, function () {` (or `, () => {`) after the test's name opens the body, which runs to that `}`.
  TEST_HEAD.lastIndex = start[0].length;
  const head = TEST_HEAD.exec(line);
  if (!head || head.index + head[0].length > close) return null;
  const name = line.slice(start[0].length, head.index);
  const body = line.slice(head.index + head[0].length, close);
  if (LINE_BREAK.test(name) || LINE_BREAK.test(body)) return null;
  return statements(body);
}

/** Statements split at their semicolons (one inside a quoted string stays). */
function statements(text: string): string[] {
  const out: string[] = [];
  let quote = "";
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === ";") {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter((s) => s !== "");
}

/** A check of the status that could not be translated: the request then gets no default status check either. */
const STATUS_CHECK = /\.status\b|\.code\b|to\.be\.(?:ok|success|error|clientError|serverError|info|redirection)\b/;

/** The assertions a test script stands for, and a warning for each line that has no counterpart. */
export function translateTests(script: string[]): { expect: Assertion[]; warnings: string[]; statusLeftOut: boolean } {
  const expect: Assertion[] = [];
  const warnings: string[] = [];
  let statusLeftOut = false;
  const lines = script.flatMap((l) => oneLineTest(l) ?? [l]);
  for (const raw of lines) {
    const line = raw.trim().replace(/;$/, "").trim();
    if (FRAME.some((f) => f.test(line))) continue;
    let done = false;
    for (const [re, make] of PATTERNS) {
      const m = line.match(re);
      if (!m) continue;
      const a = make(m);
      if (a) {
        expect.push(a);
        done = true;
      }
      break;
    }
    if (!done) {
      warnings.push(`the test script line \`${line.slice(0, 200)}\` has no counterpart and was left out`);
      if (STATUS_CHECK.test(line)) statusLeftOut = true;
    }
  }
  return { expect, warnings, statusLeftOut };
}

interface PmItem {
  name: string;
  request: {
    method: string;
    url: { toString(): string };
    headers: { all(): { key: string; value: string; disabled?: boolean }[] };
    body?: {
      mode?: string;
      raw?: string;
      options?: { raw?: { language?: string } };
      urlencoded?: { all(): { key: string; value: string; disabled?: boolean }[] };
      formdata?: { all(): { key: string; value?: string; type?: string; disabled?: boolean }[] };
      graphql?: { query?: string; variables?: string };
    };
  };
  getAuth(): { type: string; parameters(): { toObject(): Record<string, unknown> } } | undefined;
  events: { listenersOwn(name: string): { script?: { exec?: string[] } }[] };
}

function authHeaders(item: PmItem, request: Request, headers: Record<string, string>, warn: (m: string) => void) {
  const auth = item.getAuth();
  if (!auth || auth.type === "noauth") return;
  const p = auth.parameters().toObject();
  const s = (k: string) => (p[k] === undefined || p[k] === null ? "" : String(p[k]));
  if (auth.type === "bearer") headers.Authorization = `Bearer ${s("token")}`;
  else if (auth.type === "basic") {
    const pair = `${s("username")}:${s("password")}`;
    if (pair.includes("{{")) warn("basic auth with variables cannot be encoded when imported: set an Authorization header with the encoded value");
    else headers.Authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
  } else if (auth.type === "apikey") {
    if (s("in") === "query") request.query = { ...(request.query ?? {}), [s("key")]: s("value") };
    else headers[s("key") || "X-API-Key"] = s("value");
  } else warn(`the ${auth.type} authorization is not supported and was left out`);
}

/** A `{{name}}` placeholder: filled in when the step runs, so it is never encoded. */
const PLACEHOLDER = /(\{\{[^{}]*\}\})/;
/** A form field's key or value as URLSearchParams writes it (space as +), its `{{variables}}` kept intact. */
const formEncode = (text: string) =>
  text
    .split(PLACEHOLDER)
    .map((part, i) => (i % 2 === 1 ? part : new URLSearchParams([["", part]]).toString().slice(1)))
    .join("");

function readRequest(item: PmItem, warn: (m: string) => void): Request {
  const r = item.request;
  const method = r.method.toUpperCase();
  if (!METHODS.has(method)) warn(`the method ${method} is not supported; GET is used`);
  const request: Request = { method: (METHODS.has(method) ? method : "GET") as Method, url: r.url.toString() };
  const headers: Record<string, string> = {};
  for (const h of r.headers.all()) if (!h.disabled && h.key) headers[h.key] = h.value ?? "";
  const contentType = () => Object.entries(headers).find(([k]) => k.toLowerCase() === "content-type")?.[1];
  const body = r.body;
  if (body?.mode === "raw" && body.raw) {
    let json: unknown;
    if (body.options?.raw?.language === "json" || /json/i.test(contentType() ?? "")) {
      try {
        json = JSON.parse(body.raw);
      } catch {
        // Postman lets {{variables}} stand for JSON values: sent as text.
      }
    }
    if (json !== undefined) request.json = json as Request["json"];
    else {
      request.body = body.raw;
      if (body.options?.raw?.language === "json" && !contentType()) headers["Content-Type"] = "application/json";
    }
  } else if (body?.mode === "urlencoded" && body.urlencoded) {
    const pairs = body.urlencoded.all().filter((f) => !f.disabled);
    request.body = pairs.map((f) => `${formEncode(f.key)}=${formEncode(f.value ?? "")}`).join("&");
    if (!contentType()) headers["Content-Type"] = "application/x-www-form-urlencoded";
  } else if (body?.mode === "graphql" && body.graphql) {
    let variables: unknown;
    try {
      variables = body.graphql.variables ? JSON.parse(body.graphql.variables) : undefined;
    } catch {
      warn("the GraphQL variables are not valid JSON and were left out");
    }
    request.json = { query: body.graphql.query ?? "", ...(variables === undefined ? {} : { variables }) } as Request["json"];
  } else if (body?.mode && body.mode !== "raw") warn(`the ${body.mode} body is not supported and was left out`);
  authHeaders(item, request, headers, warn);
  if (Object.keys(headers).length) request.headers = headers;
  return request;
}

/** The most entries of one list (requests of a folder, headers, query parameters, variables …) a collection may have. */
const MAX_LIST_ENTRIES = 10_000;
/** The longest URL an automation takes (its request.url), and the most header text a step sends. */
const MAX_URL_CHARS = 4000;
const MAX_HEADER_CHARS = 64 * 1024;

/**
 * Refuses what postman-collection would take minutes to read. It keeps requests, headers, query parameters and
 * variables in lists whose building takes time quadratic in their length, and splits a URL's query and a header text
 * into such lists: a URL of a million `&`, or half a million empty headers, held the server for a minute or more.
 * Nothing an automation could take is refused: a URL past the longest it takes, headers past what a step sends.
 */
function refuseOversized(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    if (value.length > MAX_LIST_ENTRIES) throw new Error(`${path} has ${value.length} entries: svc reads at most ${MAX_LIST_ENTRIES} in one list`);
    for (const [i, v] of value.entries()) refuseOversized(v, `${path}[${i}]`);
    return;
  }
  if (value === null || typeof value !== "object") return;
  for (const [k, v] of Object.entries(value)) {
    const at = `${path}.${k}`;
    if (typeof v === "string") {
      // A URL as text, as an item's whole request, or as the raw text and query of a URL written as an object.
      const urlText = k === "url" || (k === "request" && path.endsWith("]")) || (path.endsWith(".url") && (k === "raw" || k === "query"));
      if (urlText && v.length > MAX_URL_CHARS)
        throw new Error(`${at} is ${v.length} characters long: an automation's URL is at most ${MAX_URL_CHARS} characters`);
      if (k === "header" && v.length > MAX_HEADER_CHARS)
        throw new Error(`${at} is ${v.length} characters long: a step sends at most ${MAX_HEADER_CHARS} characters of headers`);
    } else refuseOversized(v, at);
  }
}

/** Reads a collection; throws on what is not a Postman collection. */
export function readPostman(doc: unknown, nameOverride?: string): ImportPlan {
  const d = doc as { info?: { name?: unknown; schema?: unknown }; item?: unknown };
  if (!d || typeof d !== "object" || !d.info || typeof d.info.name !== "string" || !Array.isArray(d.item))
    throw new Error("not a Postman collection (v2.1: info.name and item are required)");
  if (typeof d.info.schema === "string" && !/v2\.[01]/.test(d.info.schema)) throw new Error(`the schema ${d.info.schema} is not v2.0 or v2.1`);
  refuseOversized(doc, "collection");
  const collection = new Collection(doc as ConstructorParameters<typeof Collection>[0]);
  const title = nameOverride ?? d.info.name;
  const plan: ImportPlan = { automations: [], groups: [], warnings: [] };
  const variables: Record<string, string> = {};
  for (const v of collection.variables.all() as { key: string; value: unknown; disabled?: boolean }[]) {
    if (v.disabled) continue;
    if (!VAR_NAME.test(v.key))
      plan.warnings.push({ request: title, message: `the variable "${v.key}" has no valid name (letters, digits and _) and was left out` });
    else variables[v.key] = v.value === undefined || v.value === null ? "" : String(v.value);
  }
  /** Scripts a collection or folder holds for all its requests: what Postman runs before or after each of them. */
  interface Scope {
    tests: ReturnType<typeof translateTests>;
  }
  type Scripted = { events: { listenersOwn(name: string): { script?: { exec?: string[] } }[] } };
  const lines = (owner: Scripted, name: string) => owner.events.listenersOwn(name).flatMap((e) => e.script?.exec ?? []);
  /** A collection's or folder's own scripts, each told once, at its name, with what became of it. */
  const scopeOf = (owner: Scripted, what: string, at: string, outer: Scope | undefined): Scope => {
    const warn = (message: string) => plan.warnings.push({ request: at, message });
    if (lines(owner, "prerequest").some((l) => l.trim())) warn(`the pre-request script of ${what} is not imported and was left out`);
    const own = translateTests(lines(owner, "test"));
    const script = lines(owner, "test").some((l) => l.trim());
    if (script) {
      for (const w of own.warnings) warn(w);
      const n = own.expect.length;
      warn(
        n > 0
          ? `the test script of ${what} runs after each of its requests in Postman: its ${n} assertion${n === 1 ? " was" : "s were"} added to each of them`
          : `the test script of ${what} has no assertion svc can take: nothing of it was imported`,
      );
      if (own.statusLeftOut && !own.expect.some((x) => "status" in x))
        warn(`the test script of ${what} checks the status in a way not imported: its requests got no status check; add the one it means`);
    }
    const tests = {
      expect: [...(outer?.tests.expect ?? []), ...own.expect],
      warnings: [],
      statusLeftOut: (outer?.tests.statusLeftOut ?? false) || own.statusLeftOut,
    };
    return { tests };
  };
  // Postman's folders may hold variables too: one environment holds them all (a name given two values keeps the first).
  const addVariables = (list: unknown, at: string, whose: string) => {
    if (!Array.isArray(list)) return;
    for (const v of list as { key?: unknown; value?: unknown; disabled?: boolean }[]) {
      if (!v || typeof v !== "object" || v.disabled || typeof v.key !== "string") continue;
      const value = v.value === undefined || v.value === null ? "" : typeof v.value === "string" ? v.value : JSON.stringify(v.value);
      if (!VAR_NAME.test(v.key))
        plan.warnings.push({ request: at, message: `the variable "${v.key}" has no valid name (letters, digits and _) and was left out` });
      else if (variables[v.key] !== undefined && variables[v.key] !== value)
        plan.warnings.push({
          request: at,
          message: `the variable "${v.key}" of ${whose} has another value than the one already in the environment, which is kept: give it another name or set it in the requests`,
        });
      else variables[v.key] = value;
    }
  };
  const collectionScope = scopeOf(collection as unknown as Scripted, "the collection", title, undefined);
  const walk = (list: { each(f: (i: unknown) => void): void }, raw: unknown, folders: { members: string[] }[], scope: Scope) => {
    let index = 0;
    list.each((node) => {
      const rawNode = Array.isArray(raw) ? (raw[index] as { variable?: unknown; item?: unknown } | undefined) : undefined;
      index++;
      if (ItemGroup.isItemGroup(node)) {
        const g = node as unknown as { name: string; description?: { content?: string }; items: typeof list } & Scripted;
        const group = { name: g.name, description: `Imported from the folder ${g.name} of the Postman collection ${d.info?.name}`, members: [] as string[] };
        plan.groups?.push(group);
        addVariables(rawNode?.variable, g.name, `the folder ${g.name}`);
        walk(g.items, rawNode?.item, [...folders, group], scopeOf(g, `the folder ${g.name}`, g.name, scope));
        return;
      }
      const item = node as PmItem;
      const ref = String(plan.automations.length);
      const name = item.name || `${item.request.method} ${item.request.url.toString()}`;
      const warn = (message: string) => plan.warnings.push({ request: name, message });
      const request = readRequest(item, warn);
      // Postman fills {{$guid}}, {{$timestamp}}, … itself; svc has no such variables: they would go out as written.
      const dynamic = [...new Set(JSON.stringify(request).match(/\{\{\s*\$[A-Za-z]+\s*\}\}/g) ?? [])];
      if (dynamic.length > 0)
        warn(
          `Postman's dynamic variable${dynamic.length > 1 ? "s" : ""} ${dynamic.join(", ")} ${dynamic.length > 1 ? "have" : "has"} no counterpart in svc: put a value in the environment or the step instead`,
        );
      // Its own script; the collection's and its folders' were told once, at their names.
      const own = translateTests(item.events.listenersOwn("test").flatMap((e) => e.script?.exec ?? []));
      for (const w of own.warnings) warn(w);
      const tests = { expect: [...scope.tests.expect, ...own.expect], statusLeftOut: scope.tests.statusLeftOut || own.statusLeftOut };
      if (item.events.listenersOwn("prerequest").some((e) => (e.script?.exec ?? []).some((l) => l.trim())))
        warn("the pre-request script is not imported and was left out");
      // Without a status check of its own, a request is expected to succeed; unless the script checked the status
      // in a way left out (it may expect a 401): then guessing would turn the test around.
      const expect = tests.expect.some((a) => "status" in a) || tests.statusLeftOut ? tests.expect : [{ status: { lt: 400 } }, ...tests.expect];
      if (own.statusLeftOut && !tests.expect.some((a) => "status" in a))
        warn("its test script checks the status in a way not imported: no status check was added; add the one it means");
      const automation: ImportedAutomation = {
        ref,
        name,
        description: `Imported from the Postman collection ${d.info?.name}`,
        steps: [{ name: name.slice(0, 200), request, expect }],
      };
      plan.automations.push(automation);
      for (const f of folders) f.members.push(ref);
    });
  };
  walk(collection.items as unknown as { each(f: (i: unknown) => void): void }, d.item, [], collectionScope);
  if (Object.keys(variables).length) plan.environment = { name: title, variables };
  return plan;
}
