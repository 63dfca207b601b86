// Loads the configuration: command-line flags > SVC_* environment variables > config file > defaults.
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { editDistance } from "../src/manifest/errors";
import { type Config, ConfigSchema } from "./schema";

export class ConfigError extends Error {}

type Tree = { [k: string]: unknown };

/** Every leaf key of the schema as a dotted path, e.g. "rate_limit.per_ip_per_hour". */
function leafPaths(schema: z.ZodType, prefix = ""): string[] {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodDefault || s instanceof z.ZodPrefault || s instanceof z.ZodOptional || s instanceof z.ZodPipe) {
    s = s instanceof z.ZodPipe ? (s.in as z.ZodType) : (s.unwrap() as z.ZodType);
  }
  if (s instanceof z.ZodObject) {
    return Object.entries(s.shape).flatMap(([k, v]) => leafPaths(v as z.ZodType, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

export const CONFIG_KEYS = leafPaths(ConfigSchema);

/** `rate_limit.per_ip_per_hour` → `SVC_RATE_LIMIT_PER_IP_PER_HOUR`. */
export const envName = (path: string) => `SVC_${path.replace(/\./g, "_").toUpperCase()}`;

function setPath(tree: Tree, path: string, value: unknown): void {
  const parts = path.split(".");
  let node = tree;
  for (const p of parts.slice(0, -1)) {
    if (typeof node[p] !== "object" || node[p] === null) node[p] = {};
    node = node[p] as Tree;
  }
  node[parts[parts.length - 1] as string] = value;
}

export interface LoadOptions {
  file?: string;
  env?: Record<string, string | undefined>;
  /** Flag values by dotted key; undefined values are ignored. */
  flags?: Record<string, unknown>;
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const file = opts.file ?? env.SVC_CONFIG;
  let tree: Tree = {};
  if (file) {
    if (!existsSync(file)) throw new ConfigError(`config file ${file} does not exist`);
    try {
      tree = Bun.TOML.parse(readFileSync(file, "utf8")) as Tree;
    } catch (e) {
      throw new ConfigError(`config file ${file} is not valid TOML: ${(e as Error).message}`);
    }
  }
  // Where each key's value came from, so that a refusal points at the place to change: the file, a variable or a flag.
  const source = new Map<string, string>();
  for (const key of CONFIG_KEYS) {
    const v = env[envName(key)];
    if (v !== undefined && v !== "") {
      setPath(tree, key, v);
      source.set(key, envName(key));
    }
  }
  for (const [key, v] of Object.entries(opts.flags ?? {})) {
    if (v === undefined) continue;
    setPath(tree, key, v);
    source.set(key, key.includes(".") ? "the command line" : `--${key.replace(/_/g, "-")}`);
  }
  const parsed = ConfigSchema.safeParse(tree);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue ? issue.path.join(".") : "";
    // zod says "expected number, received NaN" of a value that is not a number at all.
    const message = issue?.code === "invalid_type" && issue.expected === "number" ? "expected a number" : (issue?.message ?? "invalid");
    // Only the file can hold a key the schema does not know (variables and flags name known keys).
    if (issue?.code === "unrecognized_keys")
      throw new ConfigError(`invalid configuration in ${file ?? "the config file"}: ${key ? `[${key}] ` : ""}${message}`);
    const where = CONFIG_KEYS.includes(key) ? ` (or ${envName(key)})` : "";
    const from = source.get(key) ?? (file && valueAt(tree, key) !== undefined ? `the config file ${file}` : undefined);
    // The value is shown unless the setting may hold a credential (a database URL's password, a token, a secret key).
    const got = from ? ` (${/url|password|secret|token|key/.test(key) ? "" : `${JSON.stringify(valueAt(tree, key))} `}from ${from})` : "";
    throw new ConfigError(`invalid configuration: ${key}${where}: ${message}${got}`);
  }
  return parsed.data;
}

function valueAt(tree: Tree, path: string): unknown {
  let node: unknown = tree;
  for (const p of path.split(".")) node = typeof node === "object" && node !== null ? (node as Tree)[p] : undefined;
  return node;
}

/** SVC_* variables svc reads that are not settings of svc serve: the CLI's, the runner's, the installers'. */
const OTHER_VARIABLES = new Set([
  "SVC_CONFIG",
  "SVC_API_KEY",
  "SVC_SERVER",
  "SVC_PROJECT",
  "SVC_RUNNER_TOKEN",
  "SVC_RUNNER_NAME",
  "SVC_RUNNER_LABELS",
  "SVC_RUNNER_SERVER",
  "SVC_INSTALL_DIR",
  "SVC_BUN",
  "SVC_COMPILED",
  "SVC_VALIDATE_RESPONSES",
  "SVC_TEST_BACKEND",
  "SVC_ROOT",
  "SVC_PREFIX",
  "SVC_BINARY",
  "SVC_USER_PREFIX",
  "SVC_ADMIN_EMAIL",
]);

/**
 * The SVC_* variables of the environment that no setting reads, each with the setting's variable it is probably a
 * typo of. A misspelt variable would otherwise leave its setting at the file's value or the default, unnoticed.
 * Told, not refused: the environment of a service may carry variables of other programs that begin with SVC_.
 */
export function unknownEnvVariables(env: Record<string, string | undefined> = process.env): { name: string; guess: string | null }[] {
  const known = CONFIG_KEYS.map(envName);
  return Object.keys(env)
    .filter((name) => name.startsWith("SVC_") && !known.includes(name) && !OTHER_VARIABLES.has(name))
    .sort()
    .map((name) => {
      const best = known.map((k) => ({ k, d: editDistance(k, name) })).sort((a, b) => a.d - b.d)[0];
      return { name, guess: best && best.d <= Math.max(2, Math.floor((best.k.length - 4) / 4)) ? best.k : null };
    });
}
