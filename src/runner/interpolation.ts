// `{{NAME}}` interpolation from the run's variables, secrets and earlier captures.
import { PLACEHOLDER_SOURCE } from "../manifest/automation-format";

export class MissingVariableError extends Error {
  constructor(readonly variable: string) {
    super(`{{${variable}}} is not defined: add it to the run's environment (variables or secrets) or capture it in an earlier step`);
  }
}

const PLACEHOLDER = new RegExp(PLACEHOLDER_SOURCE, "g");
const WHOLE = new RegExp(`^${PLACEHOLDER_SOURCE}$`);

export type Variables = Map<string, unknown>;

function lookup(vars: Variables, name: string): unknown {
  if (!vars.has(name)) throw new MissingVariableError(name);
  return vars.get(name);
}

const asText = (v: unknown): string => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));

export function interpolateText(text: string, vars: Variables): string {
  if (!text.includes("{{")) return text;
  return text.replace(PLACEHOLDER, (_, name: string) => asText(lookup(vars, name)));
}

/** In JSON bodies a string that is exactly one placeholder takes the variable's own type (a captured number stays a number). */
export function interpolateJson(value: unknown, vars: Variables): unknown {
  if (typeof value === "string") {
    if (!value.includes("{{")) return value;
    const whole = WHOLE.exec(value);
    if (whole) return lookup(vars, whole[1] as string);
    return interpolateText(value, vars);
  }
  if (Array.isArray(value)) return value.map((v) => interpolateJson(v, vars));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateJson(v, vars);
    return out;
  }
  return value;
}

export function interpolateRecord(rec: Record<string, string | number | boolean> | undefined, vars: Variables): Record<string, string> {
  const out: Record<string, string> = {};
  if (!rec) return out;
  for (const [k, v] of Object.entries(rec)) out[k] = interpolateText(String(v), vars);
  return out;
}
