// The terse condition form of an assertion, "[SUBJECT] OPERATOR VALUE", e.g. "[STATUS] == 200",
// "[BODY].items[0].id == 1", "[HEADER].content-type contains json", "[RESPONSE_TIME] < 500". It is read into
// the canonical assertion object at the edge, so everything after validation sees one form.

type Op = "equals" | "not_equals" | "contains" | "matches" | "exists" | "gt" | "gte" | "lt" | "lte";
type Operators = Partial<Record<Op, unknown>>;

/** The canonical assertions a condition can stand for (a subset of the Assertion schema's shapes). */
export type ConditionAssertion =
  | { status: number | Operators }
  | ({ header: string } & Operators)
  | ({ json: string } & Operators)
  | { body: Operators }
  | { duration_ms: Operators };

const SYMBOLS: Record<string, Op> = { "==": "equals", "!=": "not_equals", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte" };
const NUMERIC: Op[] = ["gt", "gte", "lt", "lte"];

export const CONDITION_HELP =
  'write [SUBJECT] OPERATOR VALUE: [STATUS], [BODY], [BODY].json.path, [HEADER].name or [RESPONSE_TIME], then ==, !=, <, <=, >, >=, contains, matches, exists or !exists, e.g. "[STATUS] == 200" or "[BODY].id == 1"';

/** A JSON value when the text is one ("1", "\"a b\"", "true", "[1,2]"), else the text itself. */
function conditionValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function parseCondition(input: string): { assertion: ConditionAssertion } | { problem: string } {
  const text = input.trim();
  const m = /^\[(STATUS|BODY|HEADER|RESPONSE_TIME)\](\S*)\s+(==|!=|<=|>=|<|>|contains|matches|!exists|exists)(?:\s+([\s\S]+))?$/i.exec(text);
  if (!m) return { problem: `"${input}" is not a condition: ${CONDITION_HELP}` };
  const subject = (m[1] as string).toUpperCase();
  const path = m[2] as string;
  const word = (m[3] as string).toLowerCase();
  const raw = m[4]?.trim();
  let ops: Operators;
  if (word === "exists" || word === "!exists") {
    if (raw !== undefined) return { problem: `"${input}": ${word} takes no value` };
    ops = { exists: word === "exists" };
  } else {
    if (raw === undefined) return { problem: `"${input}": ${word} needs a value after it` };
    const op = SYMBOLS[word] ?? (word as Op);
    // A regular expression or a substring is text, unless quoted JSON says otherwise.
    let value = op === "matches" ? (raw.startsWith('"') ? conditionValue(raw) : raw) : conditionValue(raw);
    if (NUMERIC.includes(op) && typeof value !== "number") return { problem: `"${input}": ${word} compares numbers, not ${JSON.stringify(value)}` };
    if (op === "matches" && typeof value !== "string") value = String(value);
    if (op === "contains" && typeof value === "object") return { problem: `"${input}": contains takes a text, number or boolean` };
    ops = { [op]: value };
  }
  switch (subject) {
    case "STATUS":
      if (path) return { problem: `"${input}": [STATUS] has no path` };
      // "[STATUS] == 200" is the plain {"status": 200}; other operators keep their object.
      return { assertion: { status: typeof ops.equals === "number" ? ops.equals : ops } };
    case "RESPONSE_TIME":
      if (path) return { problem: `"${input}": [RESPONSE_TIME] has no path` };
      return { assertion: { duration_ms: ops } };
    case "HEADER":
      if (!/^\.[^\s.]+$/.test(path)) return { problem: `"${input}": name the header, e.g. [HEADER].content-type` };
      return { assertion: { header: path.slice(1), ...ops } };
    default:
      if (!path) return { assertion: { body: ops } };
      if (!/^(\.|\[)/.test(path)) return { problem: `"${input}": a body path starts with . or [, e.g. [BODY].items[0].id` };
      return { assertion: { json: `$${path}`, ...ops } };
  }
}
