// Evaluates http assertions; every result states the expectation beside the actual value in one line.
import type { Assertion } from "../manifest/automation-format";
import { readJsonPath } from "../manifest/json-path";
import { compileJsonSchema } from "../manifest/json-schema";
import { linearPattern, patternProblem } from "../manifest/patterns";
import { interpolateJson, interpolateText, type Variables } from "./interpolation";
import { cutText } from "./secret-masking";
import { StepFailure } from "./step-result";

export interface AssertionResult {
  assertion: string;
  /** What was looked at: `status`, `$.price`, `header x-total`, `body`, `duration_ms`. */
  subject?: string;
  /** How it was compared: `==`, `!=`, `<`, `<=`, `>`, `>=`, `contains`, `matches`, `is` (a type), `exists`, `does not exist`, `matches schema`. */
  operator?: string;
  passed: boolean;
  expected?: unknown;
  actual?: unknown;
  message: string;
}

/** What assertions look at; the body is parsed as JSON only when an assertion needs it. */
export interface ObservedResponse {
  status: number;
  headers: Headers;
  text: string;
  durationMs: number;
  json(): { ok: true; value: unknown } | { ok: false; error: string };
}

type Ops = {
  equals?: unknown;
  not_equals?: unknown;
  contains?: string | number | boolean;
  matches?: string;
  exists?: boolean;
  type?: string;
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
};

/** JSON text of a value cut after `max` characters, without serialising the rest: a 10 MB document costs what a small one does. */
function jsonPrefix(v: unknown, max: number): { text: string; cut: boolean } {
  let out = "";
  // Returns false once the budget is spent.
  const write = (x: unknown): boolean => {
    if (x === null || typeof x !== "object") {
      if (typeof x === "string" && x.length > max) {
        out += JSON.stringify(x.slice(0, max));
        return false;
      }
      out += JSON.stringify(x) ?? "null";
      return out.length <= max;
    }
    const array = Array.isArray(x);
    out += array ? "[" : "{";
    let first = true;
    if (array) {
      for (const item of x) {
        if (!first) out += ",";
        first = false;
        if (!write(item)) return false;
      }
    } else {
      for (const k in x) {
        const item = (x as Record<string, unknown>)[k];
        if (item === undefined) continue;
        if (!first) out += ",";
        first = false;
        out += `${JSON.stringify(k)}:`;
        if (!write(item)) return false;
      }
    }
    out += array ? "]" : "}";
    return out.length <= max;
  };
  return write(v) ? { text: out, cut: false } : { text: out.slice(0, max), cut: true };
}

const show = (v: unknown): string => {
  if (v === undefined) return "nothing";
  // A number, a boolean or a short string is its JSON as it is: what jsonPrefix would write, without its walk.
  if (v === null || typeof v !== "object") {
    const text = JSON.stringify(v) ?? "null";
    if (text.length <= 200) return text;
  }
  const { text, cut } = jsonPrefix(v, 200);
  return cut ? `${text}…` : text;
};

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const typeOf = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

function asNumber(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/**
 * The JSON parser's reason without the piece of the body it quotes ('Unexpected identifier "…"'): it cuts that
 * piece where it likes, unmarked, so the beginning of a secret at its end would escape masking. The body's start
 * is shown beside it anyway, cut and marked.
 */
const parserWords = (error: string): string => error.replace(/\s*"[^"]*"?/g, "").trim();

const ACTUAL_MAX_CHARS = 2048;
/**
 * A recorded value (actual or expected) is capped like the response excerpt: a 10 MB body must not be copied into
 * every result, nor a 5 MB captured value into the expected value of every assertion that compares with it.
 */
function capActual(v: unknown): unknown {
  if (typeof v === "string") return cutText(v, ACTUAL_MAX_CHARS);
  if (v !== null && typeof v === "object") {
    const { text, cut } = jsonPrefix(v, ACTUAL_MAX_CHARS);
    if (cut) return `${text}…`;
  }
  return v;
}

const COMPARE: [keyof Ops, string, (a: number, b: number) => boolean][] = [
  ["gt", ">", (a, b) => a > b],
  ["gte", ">=", (a, b) => a >= b],
  ["lt", "<", (a, b) => a < b],
  ["lte", "<=", (a, b) => a <= b],
];

/**
 * Checks each operator given; the first one that fails decides the message. `typed`: the subject is a JSON value,
 * which keeps its type (a price that became the string "1.5" is not > 1); text subjects (a header) compare numeric
 * text as numbers.
 */
function checkOperators(subject: string, ops: Ops, found: boolean, actual: unknown, typed = false): AssertionResult[] {
  const out: AssertionResult[] = [];
  const recorded = found ? capActual(actual) : undefined;
  let shown: string | undefined;
  const add = (operator: string, label: string, expected: unknown, passed: boolean, expectation: string) => {
    shown ??= show(found ? actual : undefined);
    out.push({
      assertion: `${subject} ${label}`,
      subject,
      operator,
      passed,
      expected: capActual(expected),
      actual: recorded,
      message: passed ? `${subject}: ${expectation}, got ${shown}` : `${subject}: expected ${expectation}, got ${shown}`,
    });
  };
  if (ops.exists !== undefined)
    add(
      ops.exists ? "exists" : "does not exist",
      ops.exists ? "exists" : "does not exist",
      ops.exists,
      found === ops.exists,
      ops.exists ? "to exist" : "not to exist",
    );
  if (ops.equals !== undefined) {
    const e = show(ops.equals);
    add("==", `== ${e}`, ops.equals, found && deepEqual(actual, ops.equals), e);
  }
  if (ops.not_equals !== undefined)
    // Something must be there to be anything but the value: a subject that is gone fails (exists: false says "gone").
    add("!=", `!= ${show(ops.not_equals)}`, ops.not_equals, found && !deepEqual(actual, ops.not_equals), `anything but ${show(ops.not_equals)}`);
  if (ops.contains !== undefined) {
    const c = ops.contains;
    const passed = found && (typeof actual === "string" ? actual.includes(String(c)) : Array.isArray(actual) ? actual.some((x) => deepEqual(x, c)) : false);
    add("contains", `contains ${show(c)}`, c, passed, `to contain ${show(c)}`);
  }
  if (ops.matches !== undefined) {
    let passed = false;
    let bad: string | null = null;
    try {
      passed = found && actual !== undefined && linearPattern(ops.matches).test(typeof actual === "string" ? actual : JSON.stringify(actual));
    } catch (e) {
      bad = (e as Error).message;
    }
    const pattern = cutText(ops.matches, 200);
    if (bad)
      out.push({
        assertion: `${subject} matches /${pattern}/`,
        subject,
        operator: "matches",
        passed: false,
        expected: capActual(ops.matches),
        message: `${subject}: the regular expression /${pattern}/ is invalid: ${bad}`,
      });
    else add("matches", `matches /${pattern}/`, ops.matches, passed, `to match /${pattern}/`);
  }
  if (ops.type !== undefined) {
    const t = typeOf(actual);
    out.push({
      assertion: `${subject} is ${ops.type}`,
      subject,
      operator: "is",
      passed: found && t === ops.type,
      expected: ops.type,
      actual: found ? t : undefined,
      message: found && t === ops.type ? `${subject}: is ${t}` : `${subject}: expected type ${ops.type}, got ${found ? `${t} ${show(actual)}` : "nothing"}`,
    });
  }
  const n = !found ? null : typed ? (typeof actual === "number" ? actual : null) : asNumber(actual);
  for (const [key, sym, fn] of COMPARE) {
    const bound = ops[key];
    if (typeof bound === "number") add(sym, `${sym} ${bound}`, bound, n !== null && fn(n, bound), `${sym} ${bound}`);
  }
  return out;
}

type OperatorValues = Pick<Ops, "equals" | "not_equals" | "contains" | "matches">;

/**
 * Assertions with no `{{` anywhere and no pattern that fails to compile: filling them in changes nothing. Steps
 * are kept per snapshot (validateSteps), so this is decided once per assertion, not at every run.
 */
const literal = new WeakMap<Assertion, boolean>();

function isLiteral(a: Assertion): boolean {
  let known = literal.get(a);
  if (known === undefined) {
    const ops = "status" in a ? (typeof a.status === "number" ? null : a.status) : "body" in a ? a.body : "duration_ms" in a ? a.duration_ms : a;
    const pattern = ops && "matches" in ops ? ops.matches : undefined;
    known = !JSON.stringify(a).includes("{{") && (pattern === undefined || patternProblem(pattern) === null);
    literal.set(a, known);
  }
  return known;
}

/**
 * The assertion with `{{NAME}}` filled in its expected values. Subjects that are text (a header, the body) take
 * the text; elsewhere a value that is exactly one placeholder keeps the variable's type (`"{{id}}"` is the
 * number 1). A pattern is known only now: one that does not compile is the step's error, naming the field.
 */
export function interpolateAssertion(a: Assertion, vars: Variables, field: string): Assertion {
  if (isLiteral(a)) return a;
  const fill = <T extends OperatorValues>(ops: T, text: boolean): T => {
    const value = (v: unknown) => (text && typeof v === "string" ? interpolateText(v, vars) : interpolateJson(v, vars));
    const out = { ...ops };
    if (ops.equals !== undefined) out.equals = value(ops.equals);
    if (ops.not_equals !== undefined) out.not_equals = value(ops.not_equals);
    if (ops.contains !== undefined) out.contains = value(ops.contains) as T["contains"];
    if (ops.matches !== undefined) {
      const where =
        "body" in a
          ? `${field}.body.matches`
          : "status" in a
            ? `${field}.status.matches`
            : "duration_ms" in a
              ? `${field}.duration_ms.matches`
              : `${field}.matches`;
      out.matches = interpolateText(ops.matches, vars);
      const problem = patternProblem(out.matches);
      if (problem !== null) throw new StepFailure("error", `${where}: with its {{…}} filled in, ${problem}`);
    }
    return out;
  };
  if ("status" in a) return typeof a.status === "number" ? a : { status: fill(a.status, false) };
  if ("header" in a) return fill(a, true);
  if ("json" in a) return fill(a, false);
  if ("body" in a) return { body: fill(a.body, true) };
  if ("duration_ms" in a) return { duration_ms: fill(a.duration_ms, false) };
  return a;
}

export function evaluateAssertion(a: Assertion, res: ObservedResponse): AssertionResult[] {
  if ("status" in a) {
    if (typeof a.status === "number") {
      const passed = res.status === a.status;
      return [
        {
          assertion: `status == ${a.status}`,
          subject: "status",
          operator: "==",
          passed,
          expected: a.status,
          actual: res.status,
          message: passed ? `status: ${res.status}` : `status: expected ${a.status}, got ${res.status}`,
        },
      ];
    }
    return checkOperators("status", a.status, true, res.status);
  }
  // The assertion is its own operators: checkOperators reads only the operator fields.
  if ("header" in a) {
    const v = res.headers.get(a.header);
    return checkOperators(`header ${a.header}`, a, v !== null, v ?? undefined);
  }
  if ("json" in a) {
    const path = a.json;
    const ops: Ops = a;
    const parsed = res.json();
    if (!parsed.ok)
      return [
        {
          assertion: `${path}`,
          subject: path,
          passed: false,
          message: `${path}: the body is not JSON (${parserWords(parsed.error)}), got ${show(cutText(res.text, 100))}`,
        },
      ];
    let r: { found: boolean; value: unknown };
    try {
      r = readJsonPath(parsed.value, path);
    } catch (e) {
      return [{ assertion: path, subject: path, passed: false, message: (e as Error).message }];
    }
    return checkOperators(path, ops, r.found, r.value, true);
  }
  if ("body" in a) return checkOperators("body", a.body, true, res.text);
  if ("duration_ms" in a) return checkOperators("duration_ms", a.duration_ms, true, Math.round(res.durationMs));
  const validate = compileJsonSchema(a.schema);
  if (typeof validate === "string")
    return [{ assertion: "body matches schema", subject: "body", operator: "matches schema", passed: false, message: validate }];
  const parsed = res.json();
  if (!parsed.ok)
    return [
      {
        assertion: "body matches schema",
        subject: "body",
        operator: "matches schema",
        passed: false,
        message: `schema: the body is not JSON (${parsed.error})`,
      },
    ];
  const passed = validate(parsed.value) === true;
  const first = validate.errors?.[0];
  const where = first ? `${first.instancePath || "$"} ${first.message ?? "is invalid"}` : "";
  return [
    {
      assertion: "body matches schema",
      subject: "body",
      operator: "matches schema",
      passed,
      actual: passed ? undefined : where,
      message: passed ? "schema: the body matches" : `schema: expected the body to match the JSON Schema, got ${where}`,
    },
  ];
}
