// An automation written as a Playwright test (`@playwright/test`): browser steps with the same locators svc uses
// (src/runner/locators.ts reads them the same way), http steps through the `request` fixture, captures kept in
// `vars`, assertions as `expect`s. `{{NAME}}`s become the environment's values when one is given, captured values,
// or the process's environment variables (secrets always).
import type { Assertion, BrowserStep, HttpStep, Step } from "../../manifest/automation-format";
import { parseJsonPath } from "../../manifest/json-path";
import { exactRoleName, ROLE_LOCATOR } from "../../manifest/locator-syntax";
import { stepLabel } from "../../manifest/step-labels";
import type { Operators } from "./operators";

export interface PlaywrightOptions {
  /** Variables written in as values (an environment's variables); other `{{NAME}}`s are read from process.env. */
  variables: Record<string, string>;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;
const LONE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}$/;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const js = (s: string) => JSON.stringify(s);
const comment = (s: string) => s.replace(/\s+/g, " ").replace(/\*\//g, "* /");

class Writer {
  readonly lines: string[] = [];
  readonly helpers = new Set<string>();
  /** Variables captured by the steps so far: `{{NAME}}` is then the captured value. */
  readonly captured = new Set<string>();
  readonly envNames = new Set<string>();
  private depth = 0;

  constructor(readonly variables: Record<string, string>) {}

  line(s: string) {
    this.lines.push(`${"  ".repeat(this.depth)}${s}`);
  }
  block(open: string, body: () => void, close = "});") {
    this.line(open);
    this.depth++;
    body();
    this.depth--;
    this.line(close);
  }

  /** The expression one `{{NAME}}` stands for. */
  variable(name: string): { expr: string; literal?: string } {
    if (this.captured.has(name)) return { expr: IDENT.test(name) ? `vars.${name}` : `vars[${js(name)}]` };
    const written = this.variables[name];
    if (written !== undefined) return { expr: js(written), literal: written };
    this.helpers.add("env");
    this.envNames.add(name);
    return { expr: `env(${js(name)})` };
  }

  /** A text with `{{NAME}}`s: a string literal, or a template literal reading the variables. */
  text(s: string): string {
    const parts: string[] = [];
    let literal = "";
    let templated = false;
    let at = 0;
    for (const m of s.matchAll(PLACEHOLDER)) {
      literal += s.slice(at, m.index);
      const v = this.variable(m[1] as string);
      if (v.literal !== undefined) literal += v.literal;
      else {
        parts.push(templateChunk(literal), `\${${v.expr}}`);
        literal = "";
        templated = true;
      }
      at = (m.index as number) + m[0].length;
    }
    literal += s.slice(at);
    if (!templated) return js(literal);
    // Exactly one variable read from the environment: that string itself.
    if (parts.length === 2 && parts[0] === "" && literal === "" && (parts[1] as string).startsWith("${env(")) return (parts[1] as string).slice(2, -1);
    parts.push(templateChunk(literal));
    return `\`${parts.join("")}\``;
  }

  /** A JSON value as a JavaScript one: a string that is exactly one `{{NAME}}` keeps the variable's own value (and type). */
  json(v: unknown): string {
    if (typeof v === "string") {
      const lone = LONE.exec(v);
      return lone ? this.variable(lone[1] as string).expr : this.text(v);
    }
    if (Array.isArray(v)) return `[${v.map((x) => this.json(x)).join(", ")}]`;
    if (v !== null && typeof v === "object")
      return `{ ${Object.entries(v)
        .map(([k, x]) => `${IDENT.test(k) ? k : js(k)}: ${this.json(x)}`)
        .join(", ")} }`;
    return JSON.stringify(v);
  }

  /** A relative URL joined to BASE_URL, as svc joins them. */
  url(u: string): string {
    // A URL that starts with a value known only when the test runs (a captured Location) is joined then, if relative.
    if (/^\{\{/.test(u) && !/^\{\{\s*BASE_URL\s*\}\}/.test(u)) {
      this.helpers.add("absolute");
      const base = this.variables.BASE_URL;
      if (base === undefined) this.helpers.add("env");
      return `absolute(${this.text(u)}, ${base === undefined ? 'env("BASE_URL")' : js(base)})`;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(u) || /^\{\{/.test(u)) return this.text(u);
    const base = this.variables.BASE_URL;
    if (base !== undefined) return this.text(`${base.replace(/\/+$/, "")}/${u.replace(/^\/+/, "")}`);
    this.helpers.add("url");
    return `url(${this.text(u)})`;
  }
}

/** Text inside a template literal: its own escapes, and control characters written as JSON writes them. */
const templateChunk = (s: string) =>
  s
    .replace(/\\/g, "\\\\")
    .replace(/`/g, "\\`")
    .replace(/\$\{/g, "\\${")
    .replace(/[\u0000-\u001f\u2028\u2029]/g, (c) => JSON.stringify(c).slice(1, -1));

// ---- locators ----

/** `"quoted"` text means an exact match; unquoted text a substring, ignoring case (as svc reads it). */
function textArg(w: Writer, raw: string): string {
  const m = /^"(.*)"$/s.exec(raw.trim());
  return m ? `${w.text(m[1] as string)}, { exact: true }` : w.text(raw.trim());
}

/** The Playwright locator for svc's locator string: getByRole/getByText/getByLabel/getByPlaceholder/getByTestId, or page.locator. */
export function locatorCode(w: Writer, locator: string): string {
  const eq = locator.indexOf("=");
  const kind = eq > 0 ? locator.slice(0, eq).trim().toLowerCase() : "";
  const rest = eq > 0 ? locator.slice(eq + 1) : locator;
  switch (kind) {
    case "css":
      return `page.locator(${w.text(`css=${rest}`)})`;
    case "text":
      return `page.getByText(${textArg(w, rest)})`;
    case "label":
      return `page.getByLabel(${textArg(w, rest)})`;
    case "placeholder":
      return `page.getByPlaceholder(${textArg(w, rest)})`;
    case "button": {
      // As svc reads it: the button or link of that name; only when the page has none, the element showing that text.
      const m = /^"(.*)"$/s.exec(rest.trim());
      const text = w.text(m ? (m[1] as string) : rest.trim());
      const exact = m ? "true" : "false";
      const named = `page.getByRole("button", { name: ${text}, exact: ${exact} }).or(page.getByRole("link", { name: ${text}, exact: ${exact} }))`;
      return `${named}.or(page.locator("html").filter({ hasNot: ${named} }).getByText(${text}, { exact: ${exact} }))`;
    }
    case "testid":
      return `page.getByTestId(${w.text(rest.trim())})`;
    case "role": {
      const m = ROLE_LOCATOR.exec(rest);
      if (!m) return `page.locator(${w.text(locator)})`;
      const name = m[2] ?? m[3];
      const role = js((m[1] as string).toLowerCase());
      if (name === undefined) return `page.getByRole(${role})`;
      return `page.getByRole(${role}, { name: ${w.text(name.replace(/\\(.)/g, "$1"))}${exactRoleName(m) ? ", exact: true" : ""} })`;
    }
    default:
      return `page.locator(${w.text(locator)})`;
  }
}

// ---- http steps ----

/** JavaScript for svc's JSON path read on `json`: undefined where it leads nowhere; `[*]` maps over the items. */
function jsonAccess(path: string, root = "json"): string {
  const segments = parseJsonPath(path);
  let expr = root;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i] as (typeof segments)[number];
    if ("all" in s) {
      const rest = jsonAccess(`$${pathText(segments.slice(i + 1))}`, "x");
      return `items(${expr}).map((x) => ${rest}).filter((x) => x !== undefined)`;
    }
    if ("index" in s) expr = s.index < 0 ? `${expr}?.at?.(${s.index})` : `${expr}?.[${s.index}]`;
    else expr = IDENT.test(s.key) ? `${expr}?.${s.key}` : `${expr}?.[${js(s.key)}]`;
  }
  return expr;
}

function pathText(segments: ReturnType<typeof parseJsonPath>): string {
  return segments.map((s) => ("all" in s ? "[*]" : "index" in s ? `[${s.index}]` : `[${js(s.key)}]`)).join("");
}

const TYPE_HELPER = "type";

/**
 * svc's RE2 pattern as a JavaScript RegExp: its leading flags (`(?i)`, `(?s)`, `(?m)`, or together `(?is)`) become
 * the RegExp's flags, which JavaScript does not read inside a pattern.
 */
function regExp(w: Writer, pattern: string): string {
  const lead = /^\(\?([ims]+)\)/.exec(pattern);
  if (!lead) return `new RegExp(${w.text(pattern)})`;
  const flags = [...new Set(lead[1] as string)].join("");
  return `new RegExp(${w.text(pattern.slice(lead[0].length))}, ${js(flags)})`;
}

/** The expects of one operator set on `subject` (an expression); `text` when the subject is text (a header, the body). */
function operatorLines(w: Writer, subject: string, label: string, o: Operators, text: boolean): string[] {
  const out: string[] = [];
  const msg = js(label);
  const value = (v: unknown) => (text && typeof v === "string" ? w.text(v) : w.json(v));
  if (o.exists === true) out.push(`expect(${subject}, ${msg}).toBeDefined();`);
  if (o.exists === false) out.push(`expect(${subject}, ${msg}).toBeUndefined();`);
  if (o.equals !== undefined) out.push(`expect(${subject}, ${msg}).toEqual(${value(o.equals)});`);
  if (o.not_equals !== undefined) out.push(`expect(${subject}, ${msg}).not.toEqual(${value(o.not_equals)});`);
  if (o.contains !== undefined) out.push(`expect(${subject}, ${msg}).toContain(${value(o.contains)});`);
  if (o.matches !== undefined) {
    const subjectText = text ? subject : `(typeof ${subject} === "string" ? ${subject} : JSON.stringify(${subject}))`;
    out.push(`expect(${subjectText}, ${msg}).toMatch(${regExp(w, o.matches)});`);
  }
  if (o.type !== undefined) {
    w.helpers.add(TYPE_HELPER);
    out.push(`expect(typeOf(${subject}), ${msg}).toBe(${js(o.type)});`);
  }
  const n = text ? `Number(${subject})` : subject;
  if (o.gt !== undefined) out.push(`expect(${n}, ${msg}).toBeGreaterThan(${o.gt});`);
  if (o.gte !== undefined) out.push(`expect(${n}, ${msg}).toBeGreaterThanOrEqual(${o.gte});`);
  if (o.lt !== undefined) out.push(`expect(${n}, ${msg}).toBeLessThan(${o.lt});`);
  if (o.lte !== undefined) out.push(`expect(${n}, ${msg}).toBeLessThanOrEqual(${o.lte});`);
  return out;
}

function assertionLines(w: Writer, a: Assertion): string[] {
  const x = a as Record<string, unknown>;
  if ("status" in x) {
    if (typeof x.status === "number") return [`expect(res.status(), "status").toBe(${x.status});`];
    return operatorLines(w, "res.status()", "status", x.status as Operators, false);
  }
  if ("header" in x) {
    const name = String(x.header).toLowerCase();
    return operatorLines(w, `res.headers()[${js(name)}]`, `header ${x.header}`, x as Operators, true);
  }
  if ("json" in x) {
    w.helpers.add("json");
    if (String(x.json).includes("*")) w.helpers.add("items");
    return operatorLines(w, jsonAccess(String(x.json)), `json ${x.json}`, x as Operators, false);
  }
  if ("body" in x) return operatorLines(w, "body", "body", x.body as Operators, true);
  if ("duration_ms" in x) return operatorLines(w, "duration", "duration_ms", x.duration_ms as Operators, false);
  return [`// not exported (no Playwright counterpart): ${comment(JSON.stringify(a)).slice(0, 300)}`];
}

function httpStep(w: Writer, step: HttpStep) {
  const r = step.request;
  const headers = { ...(r.headers ?? {}) };
  const query = Object.entries(r.query ?? {});
  let url = w.url(r.url);
  if (query.length) {
    w.helpers.add("query");
    url = `withQuery(${url}, { ${query.map(([k, v]) => `${IDENT.test(k) ? k : js(k)}: ${w.text(String(v))}`).join(", ")} })`;
  }
  const options: string[] = [`method: ${js(r.method)}`];
  if (r.json !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) headers["Content-Type"] = "application/json";
  if (Object.keys(headers).length)
    options.push(
      `headers: { ${Object.entries(headers)
        .map(([k, v]) => `${js(k)}: ${w.text(v)}`)
        .join(", ")} }`,
    );
  if (r.json !== undefined) options.push(`data: JSON.stringify(${w.json(r.json)})`);
  else if (r.body !== undefined) options.push(`data: ${w.text(r.body)}`);
  if (r.follow_redirects === false) options.push("maxRedirects: 0");
  if (r.timeout_ms !== undefined) options.push(`timeout: ${r.timeout_ms}`);
  const expectations = step.expect ?? [];
  const captures = Object.entries(step.capture ?? {});
  const needsJson =
    expectations.some((a) => typeof a === "object" && "json" in a) ||
    captures.some(([, c]) => (typeof c === "string" ? !c.toLowerCase().startsWith("header:") : "json" in c));
  const timed = expectations.some((a) => typeof a === "object" && "duration_ms" in a);
  if (timed) w.line("const started = Date.now();");
  w.line(`const res = await request.fetch(${url}, { ${options.join(", ")} });`);
  if (timed) w.line("const duration = Date.now() - started;");
  if (needsJson || expectations.some((a) => typeof a === "object" && "body" in a)) w.line(`const body = ${r.method === "HEAD" ? '""' : "await res.text()"};`);
  if (needsJson) {
    w.helpers.add("json");
    w.line("const json = parseJson(body);");
  }
  for (const a of expectations) for (const l of assertionLines(w, a)) w.line(l);
  for (const [name, c] of captures) {
    const header = typeof c === "string" ? (c.toLowerCase().startsWith("header:") ? c.slice(7).trim() : undefined) : "header" in c ? c.header : undefined;
    const path = typeof c === "string" ? (header === undefined ? c : undefined) : "json" in c ? c.json : undefined;
    if (path?.includes("*")) w.helpers.add("items");
    const expr = header !== undefined ? `res.headers()[${js(header.toLowerCase())}]` : jsonAccess(path as string);
    const target = IDENT.test(name) ? `vars.${name}` : `vars[${js(name)}]`;
    w.line(`${target} = ${expr};`);
    w.line(`expect(${target}, ${js(`capture ${name}`)}).toBeDefined();`);
    w.captured.add(name);
  }
}

// ---- browser steps ----

/** svc's expected URL: an exact URL, a path (compared with the page's path, and its query/fragment when given), or a pattern. */
function urlExpect(w: Writer, expected: string | { matches: string }, timeout: string): string {
  if (typeof expected !== "string") return `await expect(page).toHaveURL(${regExp(w, expected.matches)}${timeout});`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(expected) || expected.includes("{{")) return `await expect(page).toHaveURL(${w.text(expected)}${timeout});`;
  const e = new URL(expected, "http://svc.invalid");
  const hashAt = expected.indexOf("#");
  const beforeHash = hashAt < 0 ? expected : expected.slice(0, hashAt);
  const parts = ["u.pathname", ...(beforeHash.includes("?") ? ["u.search"] : []), ...(hashAt >= 0 ? ["u.hash"] : [])];
  const want = e.pathname + (beforeHash.includes("?") ? e.search : "") + (hashAt >= 0 ? e.hash : "");
  return `await expect.poll(() => { const u = new URL(page.url()); return ${parts.join(" + ")}; }${timeout}).toBe(${js(want)});`;
}

function browserStep(w: Writer, step: BrowserStep, index: number) {
  const t = step.timeout_ms !== undefined ? `{ timeout: ${step.timeout_ms} }` : "";
  const opt = t ? `, ${t}` : "";
  const loc = (l: string) => `${locatorCode(w, l)}.first()`;
  if ("goto" in step) w.line(`await page.goto(${w.url(step.goto)}${opt});`);
  else if ("click" in step) w.line(`await ${loc(step.click)}.click(${t});`);
  else if ("fill" in step) w.line(`await ${loc(step.fill.locator)}.fill(${w.text(step.fill.value)}${opt});`);
  else if ("press" in step) {
    if (typeof step.press === "string") w.line(`await page.keyboard.press(${js(step.press)});`);
    else if (step.press.locator) w.line(`await ${loc(step.press.locator)}.press(${js(step.press.key)}${opt});`);
    else w.line(`await page.keyboard.press(${js(step.press.key)});`);
  } else if ("select" in step) {
    const v = step.select.value;
    w.line(`await ${loc(step.select.locator)}.selectOption(${typeof v === "string" ? w.text(v) : `[${v.map((x) => w.text(x)).join(", ")}]`}${opt});`);
  } else if ("check" in step) w.line(`await ${loc(step.check)}.check(${t});`);
  else if ("uncheck" in step) w.line(`await ${loc(step.uncheck)}.uncheck(${t});`);
  else if ("hover" in step) w.line(`await ${loc(step.hover)}.hover(${t});`);
  else if ("wait_for" in step) {
    const wf = step.wait_for;
    const state = `state: ${js(wf.state ?? "visible")}${step.timeout_ms !== undefined ? `, timeout: ${step.timeout_ms}` : ""}`;
    if (wf.locator) w.line(`await ${loc(wf.locator)}.waitFor({ ${state} });`);
    if (wf.text !== undefined) w.line(`await page.getByText(${w.text(wf.text)}).first().waitFor({ ${state} });`);
    if (wf.url !== undefined) w.line(urlExpect(w, wf.url, opt));
  } else if ("expect" in step) {
    const ex = step.expect;
    if (ex.text !== undefined) w.line(`await expect(page.getByText(${w.text(ex.text)}).first()).toBeVisible(${t});`);
    if (ex.visible !== undefined) w.line(`await expect(${loc(ex.visible)}).toBeVisible(${t});`);
    if (ex.hidden !== undefined) w.line(`await expect(${loc(ex.hidden)}).toBeHidden(${t});`);
    if (ex.url !== undefined) w.line(urlExpect(w, ex.url, opt));
    if (ex.title !== undefined) w.line(`await expect(page).toHaveTitle(${w.text(ex.title)}${opt});`);
    if (ex.count !== undefined) w.line(`await expect(${locatorCode(w, ex.count.locator)}).toHaveCount(${ex.count.equals}${opt});`);
  } else if ("screenshot" in step) {
    const file = `${String(index + 1).padStart(2, "0")}-${step.screenshot}.png`;
    w.line(`await page.screenshot({ path: test.info().outputPath(${js(file)}), fullPage: true });`);
  }
}

/** A step's title: its name, else what it does, as svc's run report names it (src/manifest/step-labels.ts). */
function stepTitle(step: Step, index: number): string {
  return `${index + 1}. ${stepLabel(step)}`.replace(/\s+/g, " ").slice(0, 200);
}

const HELPERS: Record<string, string[]> = {
  env: [
    "/** A variable this file does not hold (secrets never are): the process's environment variable of that name. */",
    "function env(name: string): string {",
    "  const value = process.env[name];",
    '  if (value === undefined) throw new Error("set the environment variable " + name);',
    "  return value;",
    "}",
  ],
  absolute: [
    "/** The URL as svc requests it: an absolute one as it is, a relative one joined to BASE_URL. */",
    "function absolute(u: string, base: string): string {",
    '  return /^[a-z][a-z0-9+.-]*:\\/\\//i.test(u) ? u : base.replace(/\\/+$/, "") + "/" + u.replace(/^\\/+/, "");',
    "}",
  ],
  url: ["/** A relative URL joined to BASE_URL. */", 'const url = (path: string) => env("BASE_URL").replace(/\\/+$/, "") + "/" + path.replace(/^\\/+/, "");'],
  query: [
    "function withQuery(url: string, query: Record<string, string>): string {",
    "  const u = new URL(url);",
    "  for (const [k, v] of Object.entries(query)) u.searchParams.append(k, v);",
    "  return u.toString();",
    "}",
  ],
  json: [
    "/** The body read as JSON; undefined when it is not JSON. */",
    "function parseJson(text: string): any {",
    "  try {",
    "    return JSON.parse(text);",
    "  } catch {",
    "    return undefined;",
    "  }",
    "}",
  ],
  items: [
    "/** What a JSON path's [*] goes over: a list's items or an object's values. */",
    'const items = (v: any): any[] => (Array.isArray(v) ? v : v !== null && typeof v === "object" ? Object.values(v) : []);',
  ],
  [TYPE_HELPER]: ['const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);'],
};

export function toPlaywright(automation: { name: string; steps: Step[] }, options: PlaywrightOptions): string {
  const w = new Writer(options.variables);
  const usesRequest = automation.steps.some((s) => "request" in s);
  const usesPage = automation.steps.some((s) => !("request" in s));
  const fixtures = [...(usesPage ? ["page"] : []), ...(usesRequest ? ["request"] : [])].join(", ");
  w.block(`test(${js(automation.name)}, async ({ ${fixtures} }) => {`, () => {
    if (automation.steps.some((s) => "request" in s && s.capture && Object.keys(s.capture).length)) w.line("const vars: Record<string, any> = {};");
    automation.steps.forEach((step, i) => {
      w.block(`await test.step(${js(stepTitle(step, i))}, async () => {`, () => {
        if ("request" in step) httpStep(w, step);
        else browserStep(w, step, i);
      });
    });
  });
  const secrets = [...w.envNames].sort();
  const head = [
    `// ${comment(automation.name)}`,
    "// Exported from svc: run it with `npx playwright test` (@playwright/test).",
    ...(secrets.length ? [`// Reads from the environment: ${secrets.join(", ")}.`] : []),
    'import { expect, test } from "@playwright/test";',
    "",
  ];
  const helpers = Object.keys(HELPERS)
    .filter((h) => w.helpers.has(h) || (h === "env" && w.helpers.has("url")))
    .flatMap((h) => [...(HELPERS[h] as string[]), ""]);
  return [...head, ...helpers, ...w.lines, ""].join("\n");
}
