// Builds the http automations for one OpenAPI operation: the positive test, the negative ones (missing required
// field, no credentials, unknown id) and the create-then-read chain.
import type { GeneratedDraft, GenerationWarningRecord } from "../../core/generations/queue";
import type { Assertion, HttpStep } from "../../manifest/automation-format";
import type { ApiOperation, ApiParameter } from "./operations";
import { MAX_SCHEMA_NODES } from "./expand";
import { linearPattern, patternProblem } from "../../manifest/patterns";
import { MAX_SAMPLE_VALUES, requiredProperties, sampleBudget, sampleOf, toJsonSchema } from "./samples";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
type Request = HttpStep["request"];

export interface Credentials {
  headers: Record<string, string>;
  query: Record<string, string>;
  variable: string;
}

/** How a documented security scheme is satisfied in a test: through an environment variable the user sets. */
export function credentialsFor(op: ApiOperation, schemes: Obj): Credentials | null {
  const requirement = op.security.find((r) => Object.keys(r).length > 0);
  if (!requirement || op.security.some((r) => Object.keys(r).length === 0)) return null;
  const name = Object.keys(requirement)[0] ?? "";
  const scheme = isObject(schemes[name]) ? schemes[name] : {};
  if (scheme.type === "apiKey" && typeof scheme.name === "string") {
    const v = "{{API_KEY}}";
    if (scheme.in === "query") return { headers: {}, query: { [scheme.name]: v }, variable: "API_KEY" };
    if (scheme.in === "header") return { headers: { [scheme.name]: v }, query: {}, variable: "API_KEY" };
  }
  if (scheme.type === "http" && String(scheme.scheme).toLowerCase() === "basic") {
    return { headers: { authorization: "Basic {{API_BASIC_AUTH}}" }, query: {}, variable: "API_BASIC_AUTH" };
  }
  return { headers: { authorization: "Bearer {{API_TOKEN}}" }, query: {}, variable: "API_TOKEN" };
}

/** The steps an automation may have (the automation format's own bound). */
const MAX_STEPS = 500;

/** The body synthesized from an operation's request schema, made once per operation and within its budget. */
const bodySamples = new WeakMap<ApiOperation, { value: unknown; cut: boolean }>();
function bodySample(op: ApiOperation): { value: unknown; cut: boolean } {
  let sample = bodySamples.get(op);
  if (!sample) {
    const budget = sampleBudget();
    sample = { value: op.body ? sampleOf(op.body.schema, 0, budget) : null, cut: budget.cut };
    bodySamples.set(op, sample);
  }
  return sample;
}

/** A response schema as JSON Schema, unless its expansion was cut short (an incomplete schema would check wrongly). */
function responseSchema(op: ApiOperation, code: string): Record<string, unknown> | null {
  return op.cut.includes(`response ${code}`) ? null : toJsonSchema(op.responseSchemas.get(code));
}

/** A path parameter with neither example nor schema still needs a segment: 1 is the likeliest id. */
const paramValue = (p: ApiParameter) => (p.example !== undefined ? p.example : (sampleOf(p.schema) ?? (p.in === "path" ? 1 : null)));

const UNKNOWN_NUMBER = 987654321;
const UNKNOWN_STRINGS = ["does-not-exist-987654321", "987654321", "zzzzzzzz", "ZZZZZZZZ", "z"];

/**
 * A value the parameter's schema allows but that is unlikely to name anything the server holds: the unknown-id test
 * expects 404 for it. Its reason instead when the schema leaves no such value (an enum, a constant, a range the
 * sample fills, a pattern no candidate matches).
 */
export function unknownValue(p: ApiParameter): { value: string | number } | { none: string } {
  const s = isObject(p.schema) ? p.schema : {};
  const known = paramValue(p);
  if (Array.isArray(s.enum)) return { none: `its schema lists every value it allows (enum ${JSON.stringify(s.enum).slice(0, 200)})` };
  if (s.const !== undefined) return { none: `its schema allows only ${JSON.stringify(s.const)}` };
  if (s.type === "integer" || s.type === "number") {
    const min =
      typeof s.minimum === "number"
        ? s.minimum + (s.exclusiveMinimum === true ? 1 : 0)
        : typeof s.exclusiveMinimum === "number"
          ? Math.floor(s.exclusiveMinimum) + 1
          : Number.NEGATIVE_INFINITY;
    const max =
      typeof s.maximum === "number"
        ? s.maximum - (s.exclusiveMaximum === true ? 1 : 0)
        : typeof s.exclusiveMaximum === "number"
          ? Math.ceil(s.exclusiveMaximum) - 1
          : Number.POSITIVE_INFINITY;
    const candidates = [UNKNOWN_NUMBER, UNKNOWN_NUMBER + 1, Math.floor(max), Math.floor(max) - 1, Math.ceil(min)];
    const value = candidates.find((c) => Number.isFinite(c) && c >= min && c <= max && c !== known);
    if (value === undefined)
      return { none: `its schema allows only ${min === max ? min : `${min} to ${max}`}, and the sample request uses ${JSON.stringify(known)}` };
    return { value };
  }
  if (s.format === "uuid") return { value: "ffffffff-ffff-4fff-bfff-ffffffffffff" };
  const minLength = typeof s.minLength === "number" ? s.minLength : 0;
  const maxLength = typeof s.maxLength === "number" ? s.maxLength : Number.POSITIVE_INFINITY;
  const fit = (c: string) => {
    let v = c.slice(0, maxLength);
    while (v.length < minLength) v += "9";
    return v;
  };
  const pattern = typeof s.pattern === "string" && patternProblem(s.pattern) === null ? linearPattern(s.pattern) : null;
  if (typeof s.pattern === "string" && !pattern) return { none: `its schema's pattern ${JSON.stringify(s.pattern)} cannot be checked` };
  const value =
    UNKNOWN_STRINGS.map(fit).find((c) => c !== String(known) && c.length <= maxLength && (!pattern || pattern.test(c))) ??
    (pattern ? farthestAlike(String(known), pattern) : undefined);
  if (value === undefined) {
    return { none: pattern ? `no value the generator makes matches its schema's pattern ${JSON.stringify(s.pattern)}` : "its schema leaves no other value" };
  }
  return { value };
}

/** Characters of one kind, from the farthest from the usual samples (0, 1, A, a) to the nearest. */
const KINDS = ["9876543210", "ZYXWVUTSRQPONMLKJIHGFEDCBA", "zyxwvutsrqponmlkjihgfedcba"];
/** The longest sample a pattern's unknown value is derived from (each character costs up to 26 pattern tests). */
const ALIKE_MAX = 64;

/**
 * A value of the sample's shape that the pattern still allows, each digit and letter moved as far as it allows
 * (`ord_000123` under `^ord_[0-9]{6}$` → `ord_999999`, `ABCD-12` under `^[A-F]{4}-[0-9]{2}$` → `FFFF-99`); undefined
 * when the sample does not match or nothing in it can move.
 */
function farthestAlike(sample: string, pattern: { test(s: string): boolean }): string | undefined {
  if (sample.length === 0 || sample.length > ALIKE_MAX || !pattern.test(sample)) return undefined;
  const chars = [...sample];
  for (let i = 0; i < chars.length; i++) {
    const kind = KINDS.find((k) => k.includes(chars[i] as string));
    if (!kind) continue;
    for (const c of kind) {
      if (c === chars[i]) break;
      const tried = [...chars.slice(0, i), c, ...chars.slice(i + 1)].join("");
      if (pattern.test(tried)) {
        chars[i] = c;
        break;
      }
    }
  }
  const value = chars.join("");
  return value === sample ? undefined : value;
}

function buildPath(op: ApiOperation, value: (p: ApiParameter) => unknown): string {
  let path = op.path;
  for (const p of op.parameters.filter((x) => x.in === "path")) {
    const v = value(p);
    // A path segment in the default "simple" style: an array's items joined with commas.
    path = path.replaceAll(`{${p.name}}`, Array.isArray(v) ? v.map((x) => encodeURIComponent(String(x))).join(",") : encodeURIComponent(String(v)));
  }
  return path;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/**
 * The query, header and cookie parameters a request sends (required ones, and optional ones with an example), each
 * serialized as the document says (OpenAPI `style` and `explode`). A value that is an exploded array of more than
 * one item repeats its name, which the `query` map cannot hold: those pairs go into the URL. `problems` names the
 * required parameters that could not be sent, and why.
 */
export function requestParameters(op: ApiOperation): {
  query: Record<string, Scalar>;
  inUrl: string[];
  headers: Record<string, string>;
  problems: string[];
} {
  const query: Record<string, Scalar> = {};
  const inUrl: string[] = [];
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  const problems: string[] = [];
  const pair = (k: string, v: Scalar) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`;
  for (const p of op.parameters) {
    if (p.in === "path" || (!p.required && p.example === undefined)) continue;
    const v = paramValue(p);
    const where = `the ${p.required ? "required " : ""}${p.in} parameter "${p.name}"`;
    if (v === null || v === undefined) {
      if (p.required) problems.push(`${where} has no example and no schema to build a value from, so the request leaves it out`);
      continue;
    }
    if (p.in === "query") {
      const style = p.style ?? "form";
      const explode = p.explode ?? style === "form";
      if (isScalar(v)) query[p.name] = v;
      else if (Array.isArray(v) && v.every(isScalar)) {
        const delimiter = { form: ",", spaceDelimited: " ", pipeDelimited: "|" }[style];
        if (v.length === 1) query[p.name] = v[0] as Scalar;
        else if (explode && style === "form") inUrl.push(...v.map((x) => pair(p.name, x)));
        else if (delimiter && !explode) query[p.name] = v.join(delimiter);
        else problems.push(`${where} is an array in style "${style}"${explode ? " exploded" : ""}, which has no query form`);
      } else if (isObject(v) && Object.values(v).every(isScalar)) {
        const entries = Object.entries(v as Record<string, Scalar>);
        if (style === "deepObject") for (const [k, x] of entries) query[`${p.name}[${k}]`] = x;
        else if (style === "form" && explode) for (const [k, x] of entries) query[k] = x;
        else if (style === "form") query[p.name] = entries.flat().join(",");
        else problems.push(`${where} is an object in style "${style}", which has no query form`);
      } else if (p.required) {
        problems.push(
          `${where} is ${Array.isArray(v) ? "an array" : "an object"} of nested values, which a query string cannot carry, so the request leaves it out`,
        );
      }
    } else if (p.in === "header" || p.in === "cookie") {
      const text = isScalar(v)
        ? String(v)
        : Array.isArray(v) && v.every(isScalar)
          ? v.join(",")
          : isObject(v) && Object.values(v).every(isScalar)
            ? Object.entries(v)
                .map(([k, x]) => (p.explode ? `${k}=${x}` : `${k},${x}`))
                .join(",")
            : null;
      if (text === null) {
        if (p.required) problems.push(`${where} is a nested value, which a ${p.in} cannot carry, so the request leaves it out`);
      } else if (p.in === "header") headers[p.name.toLowerCase()] = text;
      else cookies.push(`${p.name}=${encodeURIComponent(text)}`);
    }
  }
  if (cookies.length > 0) headers.cookie = cookies.join("; ");
  return { query, inUrl, headers, problems };
}

const isJsonType = (t: string) => /^application\/json\b|\+json\b|^\*\/\*$|^application\/\*$/i.test(t);

/** JSON, unless the documented success answers only in other media types: then the first of those. */
function acceptFor(op: ApiOperation): string {
  const success = successStatus(op);
  const types = (success && op.responseTypes.get(success.code)) || [];
  return types.length === 0 || types.some(isJsonType) ? "application/json" : (types[0] as string);
}

function buildRequest(op: ApiOperation, creds: Credentials | null, opts: { path?: string; body?: unknown; withCredentials?: boolean } = {}): Request {
  const params = requestParameters(op);
  const query: Record<string, Scalar> = { ...params.query };
  const headers: Record<string, string> = { accept: acceptFor(op), ...params.headers };
  if (creds && opts.withCredentials !== false) {
    Object.assign(headers, creds.headers);
    Object.assign(query, creds.query);
  }
  const body = opts.body !== undefined ? opts.body : op.body ? (op.body.example !== undefined ? op.body.example : bodySample(op).value) : undefined;
  const path = opts.path ?? buildPath(op, paramValue);
  return {
    method: op.method as Request["method"],
    url: params.inUrl.length > 0 ? `${path}${path.includes("?") ? "&" : "?"}${params.inUrl.join("&")}` : path,
    headers,
    ...(Object.keys(query).length > 0 ? { query } : {}),
    ...(body !== undefined && body !== null ? { json: body } : {}),
  };
}

/** The documented success: the lowest explicit 2xx code (a "2XX" range is checked as a range). */
export function successStatus(op: ApiOperation): { code: string; assertion: Assertion } | null {
  const exact = op.statuses.filter((s) => /^2\d\d$/.test(s)).sort();
  if (exact[0]) return { code: exact[0], assertion: { status: Number(exact[0]) } };
  if (op.statuses.includes("2XX")) return { code: "2XX", assertion: { status: { gte: 200, lt: 300 } } };
  return null;
}

export interface OperationTests {
  automations: GeneratedDraft[];
  warnings: GenerationWarningRecord[];
}

const label = (op: ApiOperation) => `${op.method} ${op.path}`;
const requiredFields = (op: ApiOperation) => (op.body ? requiredProperties(op.body.schema) : []);

export function testsForOperation(op: ApiOperation, schemes: Obj, serverNote: string): OperationTests {
  const automations: GeneratedDraft[] = [];
  const warnings: GenerationWarningRecord[] = [];
  const creds = credentialsFor(op, schemes);
  const tags = ["generated", "openapi", ...op.tags].slice(0, 50);
  const credNote = creds ? ` Sends credentials from the environment variable ${creds.variable}.` : "";
  const describe = (what: string) => `${what} Generated from the OpenAPI operation ${op.id} (${label(op)}).${credNote} ${serverNote}`;

  const note = (message: string) => warnings.push({ generator: "openapi", message });
  if (op.cut.includes("body")) {
    note(
      `The request body schema of ${label(op)} expands past ${MAX_SCHEMA_NODES} nodes with its $refs followed (the limit for one schema): its sample body is built from the part within the limit`,
    );
  }
  // The sample is sent when the body has no example, and stands in for one that is not an object in the missing-field test.
  if (op.body && (op.body.example === undefined || (requiredFields(op).length > 0 && !isObject(op.body.example))) && bodySample(op).cut) {
    note(`The sample request body of ${label(op)} was cut at ${MAX_SAMPLE_VALUES} values (the limit for one sample body)`);
  }

  for (const problem of requestParameters(op).problems) note(`The requests to ${label(op)} may be refused: ${problem}`);
  if (op.otherBody?.required) {
    note(`The requests to ${label(op)} may be refused: its required body is ${op.otherBody.mediaType}, and the generated tests send only JSON bodies`);
  }

  const success = successStatus(op);
  if (!success) {
    warnings.push({ generator: "openapi", message: `No positive test for ${label(op)}: it documents no 2xx response` });
  } else {
    const expect: Assertion[] = [success.assertion];
    const raw = op.responseSchemas.get(success.code);
    if (raw !== undefined && op.cut.includes(`response ${success.code}`)) {
      note(
        `The ${success.code} response schema of ${label(op)} expands past ${MAX_SCHEMA_NODES} nodes with its $refs followed (the limit for one schema): the positive test checks the status only`,
      );
    } else if (raw !== undefined) {
      const schema = toJsonSchema(raw);
      if (schema) expect.push({ schema });
      else
        warnings.push({
          generator: "openapi",
          message: `The ${success.code} response schema of ${label(op)} has a circular or external $ref: the positive test checks the status only`,
        });
    }
    automations.push({
      name: `${op.id}: ${label(op)} answers ${success.code}`,
      kind: "http",
      tags,
      description: describe(
        `A valid request (synthesized from the examples and schema) gets the documented ${success.code} and a body matching the documented schema.`,
      ),
      steps: [{ name: `${label(op)} with a valid request`, request: buildRequest(op, creds), expect }],
    });
  }

  // The documented example is a body the API accepts; a synthesized sample may break a rule the generator cannot
  // meet (a pattern, a format), and then every step is refused for that instead of the missing field.
  const sample = op.body && isObject(op.body.example) ? op.body.example : bodySample(op).value;
  const base = op.body && isObject(sample) ? sample : null;
  const required = requiredFields(op);
  if (base && required.length > MAX_STEPS) {
    note(`No missing-field test for ${label(op)}: its body requires ${required.length} fields, and an automation has at most ${MAX_STEPS} steps`);
  } else if (base && required.length > 0) {
    automations.push({
      name: `${op.id}: ${label(op)} rejects a body missing a required field`,
      kind: "http",
      tags,
      description: describe(`Each required body field (${required.join(", ")}) left out in turn must be refused with a 4xx.`),
      steps: required.map((field) => {
        const { [field]: _left, ...body } = base;
        return { name: `without "${field}"`, request: buildRequest(op, creds, { body }), expect: [{ status: { gte: 400, lt: 500 } }] };
      }),
    });
  }

  if (creds) {
    automations.push({
      name: `${op.id}: ${label(op)} without credentials answers 401`,
      kind: "http",
      tags,
      description: describe("The operation declares security: a request without credentials must be refused with 401."),
      steps: [{ name: `${label(op)} without credentials`, request: buildRequest(op, creds, { withCredentials: false }), expect: [{ status: 401 }] }],
    });
  }

  const pathParams = op.parameters.filter((p) => p.in === "path");
  const idParam = pathParams.at(-1);
  if (op.statuses.includes("404") && idParam) {
    const unknown = unknownValue(idParam);
    if ("none" in unknown) {
      note(`No unknown-id test for ${label(op)}: no value of its path parameter "${idParam.name}" is sure to be unknown, as ${unknown.none}`);
    } else {
      const name = `${op.id}: ${label(op)} with an unknown id answers 404`;
      const shown = JSON.stringify(unknown.value);
      const mockNote = `It expects 404 for ${idParam.name} ${shown}, a value the schema allows but real data is unlikely to hold: only a server holding data can answer so, while a static mock (one answering from the document's examples, such as Prism) answers every valid id alike.`;
      note(`"${name}" cannot pass against a static mock. ${mockNote}`);
      automations.push({
        name,
        kind: "http",
        tags,
        description: describe(`The operation documents 404: an id that does not exist must get it. ${mockNote}`),
        steps: [
          {
            name: `${label(op)} with an unknown id`,
            request: buildRequest(op, creds, { path: buildPath(op, (p) => (p === idParam ? unknown.value : paramValue(p))) }),
            expect: [{ status: 404 }],
          },
        ],
      });
    }
  }
  return { automations, warnings };
}

/** The properties an object schema declares, with those of its `allOf` parts (`Book` = `NewBook` + `{id}`). */
function propertiesOf(schema: unknown, depth = 0): Obj {
  if (!isObject(schema) || depth > 8) return {};
  const parts = Array.isArray(schema.allOf) ? schema.allOf.map((p) => propertiesOf(p, depth + 1)) : [];
  return Object.assign({}, ...parts, isObject(schema.properties) ? schema.properties : {});
}

/** A POST whose answer carries an `id`, and a GET of `<that path>/{param}`: create, then read what was created. */
export function createThenRead(ops: ApiOperation[], schemes: Obj, serverNote: string): OperationTests {
  const out: GeneratedDraft[] = [];
  const warnings: GenerationWarningRecord[] = [];
  // The GET of `<path>/{param}` for each <path>, found in one pass rather than one scan of every operation per POST.
  const readOf = new Map<string, ApiOperation>();
  for (const o of ops) {
    const parent = o.method === "GET" ? /^(.*)\/\{[^/{}]+\}$/.exec(o.path)?.[1] : undefined;
    if (parent !== undefined && !readOf.has(parent)) readOf.set(parent, o);
  }
  for (const create of ops.filter((o) => o.method === "POST")) {
    const success = successStatus(create);
    const schema = success ? create.responseSchemas.get(success.code) : undefined;
    const createdId = propertiesOf(schema).id;
    if (!success || createdId === undefined) continue;
    const read = readOf.get(create.path.replace(/\/+$/, ""));
    if (!read) continue;
    const readSuccess = successStatus(read);
    const param = /\{([^/{}]+)\}$/.exec(read.path)?.[1] ?? "id";
    const readPath = buildPath({ ...read, parameters: read.parameters.filter((p) => p.name !== param) }, paramValue).replace(`{${param}}`, "{{created_id}}");
    const readExpect: Assertion[] = [readSuccess?.assertion ?? { status: { gte: 200, lt: 300 } }, { json: "$.id", equals: "{{created_id}}" }];
    const readSchema = readSuccess ? responseSchema(read, readSuccess.code) : null;
    if (readSchema) readExpect.push({ schema: readSchema });
    const name = `${create.id} then ${read.id}: what is created can be read`;
    const readParam = read.parameters.find((p) => p.in === "path" && p.name === param);
    for (const reason of chainProblems(createdId, readParam, read)) warnings.push({ generator: "openapi", message: `"${name}" ${reason}` });
    out.push({
      name,
      kind: "http",
      tags: ["generated", "openapi", ...new Set([...create.tags, ...read.tags])].slice(0, 50),
      description: `Creates with ${label(create)}, keeps the returned id, reads it back with ${label(read)} and checks the id read is the one created. ${serverNote}`,
      steps: [
        {
          name: `create (${label(create)})`,
          request: buildRequest(create, credentialsFor(create, schemes)),
          expect: [success.assertion],
          capture: { created_id: "$.id" },
        },
        { name: `read it back (${label(read)})`, request: buildRequest(read, credentialsFor(read, schemes), { path: readPath }), expect: readExpect },
      ],
    });
  }
  return { automations: out, warnings };
}

const BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "pattern", "minLength", "maxLength", "format"] as const;

/**
 * Why the create-then-read chain may not pass, as the document shows it: the read's path parameter is bounded
 * where the created id is not (a created id outside the bounds is refused), and a static mock answers the read with
 * an example whose id need not be the created one.
 */
function chainProblems(createdId: unknown, readParam: ApiParameter | undefined, read: ApiOperation): string[] {
  const out: string[] = [];
  const created = isObject(createdId) ? createdId : {};
  const accepted = readParam && isObject(readParam.schema) ? readParam.schema : {};
  const tighter = BOUNDS.filter((k) => accepted[k] !== undefined && JSON.stringify(accepted[k]) !== JSON.stringify(created[k]));
  if (readParam && tighter.length > 0) {
    const bounds = tighter.map((k) => `${k} ${JSON.stringify(accepted[k])}`).join(", ");
    out.push(`may be refused: the path parameter "${readParam.name}" of ${label(read)} allows only ${bounds}, which the created id's schema does not promise`);
  }
  const readSchema = read.responseSchemas.get(successStatus(read)?.code ?? "");
  const readId = propertiesOf(readSchema).id;
  const examples = [sampleOf(createdId), sampleOf(readId)];
  const exemplified = created.example !== undefined || created.default !== undefined;
  const sameExample = exemplified && JSON.stringify(examples[0]) === JSON.stringify(examples[1]);
  if (!sameExample) {
    out.push(
      `cannot pass against a static mock: it checks the id read is the one created, and a static mock (one answering from the document's examples, such as Prism) answers the read with its own example, not what was created`,
    );
  }
  return out;
}
