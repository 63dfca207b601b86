// Loads the configuration: command-line flags > SVC_* environment variables > config file > defaults.
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
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
  for (const key of CONFIG_KEYS) {
    const v = env[envName(key)];
    if (v !== undefined && v !== "") setPath(tree, key, v);
  }
  for (const [key, v] of Object.entries(opts.flags ?? {})) {
    if (v !== undefined) setPath(tree, key, v);
  }
  const parsed = ConfigSchema.safeParse(tree);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue ? issue.path.join(".") : "?";
    const where = CONFIG_KEYS.includes(key) ? ` (or ${envName(key)})` : "";
    throw new ConfigError(`invalid configuration: ${key}${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}
