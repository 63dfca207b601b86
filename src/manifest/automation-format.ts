// The automation format: http and browser steps, assertions and captures (see docs/automations.md).
import { z } from "zod";
import { expectedUrlProblem, pageUrlProblem } from "./browser-urls";
import { parseCondition } from "./conditions";
import { JsonPathError, parseJsonPath } from "./json-path";
import { jsonSchemaProblem } from "./json-schema";
import { patternProblem } from "./patterns";
import { savedUrlProblem } from "./request-urls";
import { locatorProblem } from "./locator-syntax";

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const JsonValue: z.ZodType<unknown> = z.lazy(() => z.union([Scalar, z.array(JsonValue), z.record(z.string(), JsonValue)]));

/** `{{NAME}}` as the run engine interpolates it (src/runner/interpolation.ts reads the same source). */
export const PLACEHOLDER_SOURCE = String.raw`\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}`;
const PLACEHOLDER = new RegExp(PLACEHOLDER_SOURCE);

/** A value checked when saved, unless a `{{NAME}}` in it is only known at run time (checked there instead). */
function checkedWhenSaved(problem: (value: string) => string | null) {
  return (value: string, ctx: z.RefinementCtx) => {
    if (PLACEHOLDER.test(value)) return;
    const p = problem(value);
    if (p !== null) ctx.addIssue({ code: "custom", message: p });
  };
}

function jsonPathProblem(path: string): string | null {
  try {
    parseJsonPath(path);
    return null;
  } catch (e) {
    if (e instanceof JsonPathError) return e.message;
    throw e;
  }
}

/** A JSON path is never interpolated: it is always checked when saved. */
const JsonPath = z.string().superRefine((path, ctx) => {
  const p = jsonPathProblem(path);
  if (p !== null) ctx.addIssue({ code: "custom", message: p });
});

/** Comparison operators shared by every assertion subject. At least one must be given. */
const OperatorFields = {
  equals: JsonValue.optional().describe("Deep equality; {{NAME}} allowed (a value that is exactly one placeholder keeps the variable's type)"),
  not_equals: JsonValue.optional(),
  contains: z.union([z.string(), z.number(), z.boolean()]).optional().describe("Substring, or array element"),
  matches: z
    .string()
    .max(1000)
    .superRefine(checkedWhenSaved(patternProblem))
    .optional()
    .describe("Regular expression (RE2 syntax: no backreferences or lookaround)"),
  exists: z.boolean().optional(),
  type: z.enum(["string", "number", "boolean", "object", "array", "null"]).optional(),
  gt: z.number().optional(),
  gte: z.number().optional(),
  lt: z.number().optional(),
  lte: z.number().optional(),
};
const OPERATOR_KEYS = Object.keys(OperatorFields);
const hasOperator = (o: Record<string, unknown>) => OPERATOR_KEYS.some((k) => o[k] !== undefined);
const OPERATOR_MESSAGE = `needs at least one of ${OPERATOR_KEYS.join(", ")}`;

export const Operators = z.strictObject(OperatorFields).refine(hasOperator, OPERATOR_MESSAGE).meta({ id: "Operators" });

const StatusAssertion = z.strictObject({ status: z.union([z.number().int().min(100).max(599), Operators]) });
const HeaderAssertion = z.strictObject({ header: z.string().min(1).max(200), ...OperatorFields }).refine(hasOperator, OPERATOR_MESSAGE);
const JsonAssertion = z
  .strictObject({ json: JsonPath.min(1).max(500).describe("JSON path, e.g. $.items[0].id"), ...OperatorFields })
  .refine(hasOperator, OPERATOR_MESSAGE);
const BodyAssertion = z.strictObject({ body: Operators.describe("The response body as text") });
const DurationAssertion = z.strictObject({ duration_ms: Operators.describe("Response time in milliseconds") });
/** The assertions a condition can stand for (all but `schema`). */
const ConditionTargets = z.union([StatusAssertion, HeaderAssertion, JsonAssertion, BodyAssertion, DurationAssertion]);
type ConditionOutput = z.output<typeof ConditionTargets>;

/** The terse form, read into one of the assertion objects: "[STATUS] == 200", "[BODY].id == 1", … */
const Condition = z
  .string()
  .max(2000)
  .describe('A condition: "[STATUS] == 200", "[BODY].items[0].id == 1", "[HEADER].content-type contains json", "[RESPONSE_TIME] < 500"')
  .transform((text, ctx) => {
    const parsed = parseCondition(text);
    if ("problem" in parsed) {
      ctx.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    }
    // What it reads as must be a valid assertion too ("[STATUS] == 999" is not).
    const checked = ConditionTargets.safeParse(parsed.assertion);
    if (!checked.success) {
      ctx.addIssue({ code: "custom", message: `"${text}": ${checked.error.issues[0]?.message ?? "not a valid assertion"}` });
      return z.NEVER;
    }
    return checked.data as ConditionOutput;
  });

export const Assertion = z
  .union([
    ...ConditionTargets.options,
    z.strictObject({
      schema: z
        .record(z.string(), JsonValue)
        .superRefine((schema, ctx) => {
          const p = jsonSchemaProblem(schema);
          if (p !== null) ctx.addIssue({ code: "custom", message: p });
        })
        .describe("JSON Schema (draft-07) the body must satisfy; patterns in RE2 syntax"),
    }),
    Condition,
  ])
  .meta({ id: "Assertion" });
export type Assertion = z.infer<typeof Assertion>;

const HttpMethodEnum = z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);

export const HttpRequest = z
  .strictObject({
    method: z.string().toUpperCase().pipe(HttpMethodEnum).default("GET"),
    url: z
      .string()
      .min(1)
      .max(4000)
      .superRefine(checkedWhenSaved(savedUrlProblem))
      .describe("http(s), absolute or relative to the environment's BASE_URL; {{VAR}} allowed"),
    headers: z.record(z.string(), z.string()).optional(),
    query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    json: JsonValue.optional().describe("A JSON body"),
    body: z.string().max(1_000_000).optional().describe("A text body"),
    timeout_ms: z.number().int().min(1).max(600_000).optional(),
    follow_redirects: z.boolean().optional().describe("Follow 3xx redirects (default true); false returns the 3xx response itself"),
  })
  .refine((r) => r.json === undefined || r.body === undefined, "give either json or body, not both")
  .meta({ id: "HttpRequest" });

export const Capture = z
  .union([
    z
      .string()
      .min(1)
      .max(500)
      .superRefine((text, ctx) => {
        if (text.toLowerCase().startsWith("header:")) return;
        const p = jsonPathProblem(text);
        if (p !== null) ctx.addIssue({ code: "custom", message: p });
      }),
    z.strictObject({ json: JsonPath.min(1) }),
    z.strictObject({ header: z.string().min(1) }),
  ])
  .describe('"$.path" (JSON path), "header:Name", {json: "$.path"} or {header: "Name"}');

export const HttpStep = z
  .strictObject({
    name: z.string().max(200).optional(),
    request: HttpRequest,
    expect: z.array(Assertion).max(100).optional(),
    capture: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a capture's name is letters, digits and _, not starting with a digit"), Capture).optional(),
  })
  .meta({ id: "HttpStep" });

/** A problem found by `check` becomes the value's issue; values with `{{…}}` are checked after interpolation. */
const checked = (check: (s: string) => string | null) => (value: string, ctx: z.RefinementCtx) => {
  const problem = value.includes("{{") ? null : check(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
};

/** `css=…` (or a bare CSS selector), `text=…`, `label=…`, `placeholder=…`, `button=…`, `role=NAME[name="…"]`, `testid=…`. */
export const Locator = z.string().min(1).max(1000).superRefine(checked(locatorProblem)).meta({ id: "Locator" });

/** A page to open: an http(s) URL, or a path relative to BASE_URL. */
const PageUrl = z
  .string()
  .min(1)
  .max(4000)
  .superRefine((url, ctx) => {
    const problem = pageUrlProblem(url);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** An expected page URL: exact, a path, or `{"matches": "…"}` (a regular expression, RE2 syntax). */
export const ExpectedUrl = z
  .union([
    z.string().min(1).max(4000).superRefine(checked(expectedUrlProblem)),
    z.strictObject({
      matches: z
        .string()
        .min(1)
        .max(1000)
        .superRefine(checked(patternProblem))
        .describe("Regular expression (RE2 syntax) the whole URL must contain a match of"),
    }),
  ])
  .describe('An exact URL (https://…), a path (/dashboard, compared with the path; with ?query and #fragment when given), or {"matches": "regular expression"}')
  .meta({ id: "ExpectedUrl" });

const Common = { name: z.string().max(200).optional(), timeout_ms: z.number().int().min(1).max(600_000).optional() };

export const BrowserStep = z
  .union([
    z.strictObject({ ...Common, goto: PageUrl }),
    z.strictObject({ ...Common, click: Locator }),
    z.strictObject({ ...Common, fill: z.strictObject({ locator: Locator, value: z.string().max(100_000) }) }),
    z.strictObject({ ...Common, press: z.union([z.string().min(1), z.strictObject({ locator: Locator.optional(), key: z.string().min(1) })]) }),
    z.strictObject({ ...Common, select: z.strictObject({ locator: Locator, value: z.union([z.string(), z.array(z.string())]) }) }),
    z.strictObject({ ...Common, check: Locator }),
    z.strictObject({ ...Common, uncheck: Locator }),
    z.strictObject({ ...Common, hover: Locator }),
    z.strictObject({
      ...Common,
      wait_for: z
        .strictObject({
          locator: Locator.optional(),
          text: z.string().optional(),
          url: ExpectedUrl.optional(),
          state: z.enum(["visible", "hidden", "attached", "detached"]).optional(),
        })
        .refine((w) => w.locator !== undefined || w.text !== undefined || w.url !== undefined, "wait_for needs locator, text or url"),
    }),
    z.strictObject({
      ...Common,
      expect: z
        .strictObject({
          text: z.string().optional().describe("Text visible on the page"),
          visible: Locator.optional(),
          hidden: Locator.optional(),
          url: ExpectedUrl.optional(),
          title: z.string().optional(),
          count: z.strictObject({ locator: Locator, equals: z.number().int().min(0) }).optional(),
        })
        .refine((e) => Object.values(e).some((v) => v !== undefined), "expect needs text, visible, hidden, url, title or count"),
    }),
    z.strictObject({ ...Common, screenshot: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, "a file-name-safe name") }),
  ])
  .meta({ id: "BrowserStep" });

export const Step = z.union([HttpStep, BrowserStep]).meta({ id: "Step" });
export type Step = z.infer<typeof Step>;
export type HttpStep = z.infer<typeof HttpStep>;
export type BrowserStep = z.infer<typeof BrowserStep>;

export const AutomationKind = z.enum(["http", "browser"]);

/** Steps must suit the automation's kind: http automations hold request steps; browser ones may mix both. */
export function stepKindProblems(kind: "http" | "browser", steps: Step[]): { path: string; message: string }[] {
  return steps.flatMap((step, i) =>
    kind === "http" && !("request" in step) ? [{ path: `steps.${i}`, message: "an http automation takes only request steps" }] : [],
  );
}

export function checkStepsForKind(kind: "http" | "browser", steps: Step[], ctx: z.RefinementCtx): void {
  for (const p of stepKindProblems(kind, steps)) {
    ctx.addIssue({ code: "custom", path: p.path.split(".").map((x) => (/^\d+$/.test(x) ? Number(x) : x)), message: p.message });
  }
}
