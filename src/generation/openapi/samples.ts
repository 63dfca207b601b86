// Synthesizes request values from an OpenAPI schema and its examples, and turns response schemas into the
// JSON Schema the run engine checks bodies against.
type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

function firstType(s: Schema): string | undefined {
  const t = s.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null");
  if (isObject(s.properties)) return "object";
  if (s.items !== undefined) return "array";
  return undefined;
}

function stringSample(s: Schema): string {
  const byFormat: Record<string, string> = {
    email: "user@example.com",
    "date-time": "2024-01-01T00:00:00Z",
    date: "2024-01-01",
    uuid: "00000000-0000-4000-8000-000000000001",
    uri: "https://example.com/",
    url: "https://example.com/",
    hostname: "example.com",
    ipv4: "192.0.2.1",
    password: "Secret-123",
  };
  let v = (typeof s.format === "string" && byFormat[s.format]) || "example";
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  const max = typeof s.maxLength === "number" ? s.maxLength : Number.POSITIVE_INFINITY;
  while (v.length < min) v += "x";
  return v.slice(0, Math.max(min, Math.min(v.length, max)));
}

function numberSample(s: Schema, integer: boolean): number {
  // An exclusive bound in either form: OpenAPI 3.0's `exclusiveMinimum: true` beside `minimum`, or 3.1's number.
  const min =
    typeof s.minimum === "number"
      ? s.minimum + (s.exclusiveMinimum === true ? 1 : 0)
      : typeof s.exclusiveMinimum === "number"
        ? s.exclusiveMinimum + 1
        : undefined;
  const max =
    typeof s.maximum === "number"
      ? s.maximum - (s.exclusiveMaximum === true ? 1 : 0)
      : typeof s.exclusiveMaximum === "number"
        ? s.exclusiveMaximum - 1
        : undefined;
  let v = min ?? 1;
  if (max !== undefined && v > max) v = max;
  return integer ? Math.ceil(v) : v;
}

/** Values one synthesized sample may hold; past them the rest of the sample is null. */
export const MAX_SAMPLE_VALUES = 1_000;

/** What is left of one sample's values, and whether it ran out (so the sample is cut short). */
export interface SampleBudget {
  left: number;
  cut: boolean;
}

export const sampleBudget = (): SampleBudget => ({ left: MAX_SAMPLE_VALUES, cut: false });

/**
 * A value the schema accepts: its example, default or first enum value, else one built from its type. Arrays of
 * arrays of objects multiply, so the values made are counted against the budget.
 */
export function sampleOf(schema: unknown, depth = 0, budget: SampleBudget = sampleBudget()): unknown {
  if (!isObject(schema) || depth > 8) return null;
  if (budget.left <= 0) {
    budget.cut = true;
    return null;
  }
  budget.left--;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((p) => sampleOf(p, depth + 1, budget));
    if (parts.every(isObject)) return Object.assign({}, ...parts);
  }
  for (const key of ["oneOf", "anyOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return sampleOf(options[0], depth + 1, budget);
  }
  switch (firstType(schema)) {
    case "object":
      return objectSample(schema, depth, budget);
    case "array": {
      const min = typeof schema.minItems === "number" ? Math.max(1, schema.minItems) : 1;
      return Array.from({ length: Math.min(min, 3) }, () => sampleOf(schema.items, depth + 1, budget));
    }
    case "string":
      return stringSample(schema);
    case "integer":
      return numberSample(schema, true);
    case "number":
      return numberSample(schema, false);
    case "boolean":
      return true;
    default:
      return null;
  }
}

/** Required properties, and optional ones that carry an example; read-only ones are the server's to set. */
function objectSample(schema: Schema, depth: number, budget: SampleBudget): Schema {
  const props = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((x): x is string => typeof x === "string") : []);
  const out: Schema = {};
  for (const [name, p] of Object.entries(props)) {
    if (budget.left <= 0) {
      budget.cut = true;
      break;
    }
    if (!isObject(p) || p.readOnly === true) continue;
    if (required.has(name) || p.example !== undefined || p.default !== undefined) out[name] = sampleOf(p, depth + 1, budget);
  }
  return out;
}

export function requiredProperties(schema: unknown): string[] {
  if (!isObject(schema) || !Array.isArray(schema.required)) return [];
  const props = isObject(schema.properties) ? schema.properties : {};
  return schema.required.filter((x): x is string => typeof x === "string" && !(isObject(props[x]) && (props[x] as Schema).readOnly === true));
}

const OPENAPI_ONLY = new Set(["example", "xml", "externalDocs", "discriminator", "nullable", "deprecated"]);

/**
 * The response schema as plain JSON Schema: OpenAPI 3.0's `nullable` becomes a null type, its own keywords are
 * dropped, and write-only properties are not required. Null when it cannot be checked offline (a circular or external $ref is left in it).
 */
export function toJsonSchema(schema: unknown, seen = new Set<unknown>()): Schema | null {
  if (!isObject(schema)) return null;
  if (seen.has(schema)) return null;
  seen.add(schema);
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "$ref") return null;
    if (OPENAPI_ONLY.has(k)) continue;
    if (isObject(v) && ["items", "additionalProperties", "not"].includes(k)) {
      const inner = toJsonSchema(v, seen);
      if (!inner) return null;
      out[k] = inner;
    } else if (isObject(v) && ["properties", "patternProperties"].includes(k)) {
      const props: Schema = {};
      for (const [name, p] of Object.entries(v)) {
        const inner = toJsonSchema(p, seen);
        if (!inner) return null;
        props[name] = inner;
      }
      out[k] = props;
    } else if (Array.isArray(v) && ["allOf", "oneOf", "anyOf"].includes(k)) {
      const parts = v.map((p) => toJsonSchema(p, seen));
      if (parts.some((p) => p === null)) return null;
      out[k] = parts;
    } else {
      out[k] = v;
    }
  }
  seen.delete(schema);
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  // OpenAPI 3.0 writes an exclusive bound as `minimum: 0, exclusiveMinimum: true`; JSON Schema (and OpenAPI 3.1)
  // holds the number itself in `exclusiveMinimum`, and refuses the whole schema over a boolean there.
  for (const [bound, exclusive] of [
    ["minimum", "exclusiveMinimum"],
    ["maximum", "exclusiveMaximum"],
  ] as const) {
    if (typeof schema[exclusive] !== "boolean") continue;
    delete out[exclusive];
    if (schema[exclusive] === true && typeof schema[bound] === "number") {
      out[exclusive] = schema[bound];
      delete out[bound];
    }
  }
  // A write-only property is sent, never answered: a response cannot be required to hold it.
  const props = isObject(schema.properties) ? schema.properties : {};
  if (Array.isArray(out.required)) {
    const readable = out.required.filter((name) => !(typeof name === "string" && isObject(props[name]) && props[name].writeOnly === true));
    if (readable.length > 0) out.required = readable;
    else delete out.required;
  }
  return out;
}
