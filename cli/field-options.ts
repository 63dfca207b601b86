// Turns a manifest field into a commander option and back: flags named after the field, values parsed by kind.
import { existsSync, readFileSync } from "node:fs";
import { InvalidArgumentError, Option } from "commander";
import type { FieldInfo } from "../src/client/schema-fields";

/** Option names the CLI itself uses. */
export const RESERVED = new Set(["server", "project", "json", "file", "watch", "output", "help"]);

export interface FieldOption {
  field: FieldInfo;
  /** commander's attribute name for the option. */
  attr: string;
}

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function parseNumber(v: string): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError("not a number");
  return n;
}

function collectList(v: string, prev: string[] | undefined): string[] {
  // A JSON array (`'["a","b"]'`, as these flags once took) is read as one too.
  if (v.trim().startsWith("[")) {
    let list: unknown;
    try {
      list = JSON.parse(v);
    } catch {
      throw new InvalidArgumentError("not a comma-separated list, nor a JSON array of strings");
    }
    if (!Array.isArray(list) || !list.every((x) => typeof x === "string")) throw new InvalidArgumentError("a JSON array here holds strings only");
    return [...(prev ?? []), ...list];
  }
  return [
    ...(prev ?? []),
    ...v
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  ];
}

function collectMap(v: string, prev: Record<string, string> | undefined): Record<string, string> {
  const eq = v.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, got "${v}"`);
  return { ...(prev ?? {}), [v.slice(0, eq)]: v.slice(eq + 1) };
}

/** Inline JSON, or `@path` to a JSON or YAML file (an OpenAPI document, a list of steps). */
function parseJsonValue(v: string): unknown {
  if (v.startsWith("@")) {
    const path = v.slice(1);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      throw new InvalidArgumentError(`cannot read ${path}: ${(e as Error).message}`);
    }
    try {
      // Loaded only when a YAML file is given: most commands never need the parser.
      return /\.ya?ml$/i.test(path) ? (require("yaml") as typeof import("yaml")).parse(text) : JSON.parse(text);
    } catch (e) {
      throw new InvalidArgumentError(`${path} is not valid ${/\.ya?ml$/i.test(path) ? "YAML" : "JSON"}: ${(e as Error).message}`);
    }
  }
  try {
    return JSON.parse(v);
  } catch {
    throw new InvalidArgumentError("not valid JSON (or @file.json / @file.yaml)");
  }
}

/** A positional argument for a JSON field: a path to a JSON or YAML file (or `@path`), else inline JSON. */
export function parseJsonArgument(v: string): unknown {
  if (v.startsWith("@") || /^\s*[[{"]/.test(v)) return parseJsonValue(v);
  if (existsSync(v)) return parseJsonValue(`@${v}`);
  // Plain text (an email address, a name): the operation's schema judges it as given.
  return v;
}

/** The option for a field; `flag` overrides the flag (e.g. `env` for a run's environment). A field named like one
 * of the CLI's own options gets `-value` appended rather than breaking every command. */
export function optionFor(field: FieldInfo, flag = field.name.replace(/_/g, "-")): FieldOption & { option: Option; negation?: Option } {
  const flagName = RESERVED.has(flag) ? `${flag}-value` : flag;
  const desc = field.description ?? field.name.replace(/_/g, " ");
  let option: Option;
  // A boolean is turned off as it is turned on (`--no-quarantined` ends a quarantine; without either it is left as is).
  const negation = field.kind === "boolean" ? new Option(`--no-${flagName}`, `${field.name.replace(/_/g, " ")}: false`) : undefined;
  switch (field.kind) {
    case "boolean":
      option = new Option(`--${flagName}`, desc);
      break;
    case "number":
      option = new Option(`--${flagName} <n>`, desc).argParser(parseNumber);
      break;
    case "enum":
      option = new Option(`--${flagName} <value>`, desc).choices(field.choices ?? []);
      break;
    case "string-list":
      option = new Option(
        `--${flagName} <a,b>`,
        `${desc} (comma-separated, repeatable${field.choices ? `: any of ${field.choices.join(", ")}` : ""})`,
      ).argParser(collectList);
      break;
    case "string-map":
      option = new Option(`--${flagName} <KEY=VALUE>`, `${desc} (repeatable)`).argParser(collectMap);
      break;
    case "json":
      option = new Option(`--${flagName} <json>`, `${desc} (JSON, or @file.json / @file.yaml)`).argParser(parseJsonValue);
      break;
    default:
      option = new Option(`--${flagName} <value>`, desc);
  }
  return { field, attr: camel(flagName), option, ...(negation ? { negation } : {}) };
}
