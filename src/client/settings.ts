// Where the CLI and MCP server get their key, server and project: login, env, .svc.json, machine config.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

export type Source = "flag" | "login" | "env" | "project-file" | "machine-config" | "default";

export interface Setting {
  value: string;
  source: Source;
  /** The file or variable it came from, for `svc whoami`. */
  from: string;
}

export interface ResolvedSettings {
  server: Setting;
  key: Setting | null;
  project: Setting | null;
  /** Why a saved key was not used (it was saved for another server), to say when no key is left. */
  withheldKey: string | null;
}

/** A key kept on this machine, and the server it was saved for. */
interface SavedKey {
  key: string;
  server: string;
  source: Source;
  from: string;
}

/** A settings problem the user must fix (exit code 2). */
export class SettingsError extends Error {}

export const DEFAULT_SERVER = "http://127.0.0.1:8080";
const KEY_IN_TEXT = /svc_[0-9A-Za-z]{43}/;
const KEY_LIKE_NAMES = new Set(["apikey", "key", "token", "accesstoken", "authtoken", "secret", "bearer"]);

type Env = Record<string, string | undefined>;

export function configDir(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.trim() !== "" ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), ".config");
  return join(base, "svc");
}

export const credentialsPath = (env: Env = process.env) => join(configDir(env), "credentials.json");
export const machineConfigPath = (env: Env = process.env) => join(configDir(env), "config.json");

function readJsonObject(path: string): Record<string, unknown> | null {
  if (!existsSync(path)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new SettingsError(`${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new SettingsError(`${path} must hold a JSON object`);
  return parsed as Record<string, unknown>;
}

function stringField(o: Record<string, unknown> | null, name: string, path: string): string | undefined {
  const v = o?.[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || v.trim() === "") throw new SettingsError(`"${name}" in ${path} must be a non-empty string`);
  return v.trim();
}

/** Writes a JSON file readable by its owner only (it may hold a key). */
function writePrivateJson(path: string, value: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

export function saveLogin(server: string, key: string, env: Env = process.env): string {
  const path = credentialsPath(env);
  writePrivateJson(path, { server, key, saved_at: new Date().toISOString() });
  // The server goes to the machine config too, so later commands reach the same place without --server.
  const cfgPath = machineConfigPath(env);
  const cfg = readJsonObject(cfgPath) ?? {};
  writePrivateJson(cfgPath, { ...cfg, server });
  return path;
}

/** Removes the saved login; returns the path if there was one. */
export function removeLogin(env: Env = process.env): string | null {
  const path = credentialsPath(env);
  if (!existsSync(path)) return null;
  rmSync(path);
  return path;
}

/** The nearest `.svc.json` from `cwd` upwards, or null. */
export function findProjectFile(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, ".svc.json");
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The path inside `value` of a key-like field or a key-shaped string, or null. */
export function findKeyLikeField(value: unknown, path = ""): string | null {
  if (typeof value === "string") return KEY_IN_TEXT.test(value) ? path || "(value)" : null;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const hit = findKeyLikeField(v, `${path}[${i}]`);
      if (hit) return hit;
    }
    return null;
  }
  if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (KEY_LIKE_NAMES.has(k.toLowerCase().replace(/[_-]/g, ""))) return here;
      const hit = findKeyLikeField(v, here);
      if (hit) return hit;
    }
  }
  return null;
}

export function readProjectFile(path: string): { server?: string; project?: string } {
  const o = readJsonObject(path);
  const keyField = findKeyLikeField(o);
  if (keyField) {
    throw new SettingsError(
      `${path} holds a key-like field (${keyField}). API keys must never be in .svc.json: it is meant to be committed. ` +
        "Remove it, revoke the key if it was ever committed, and use `svc login` or SVC_API_KEY instead.",
    );
  }
  return { server: stringField(o, "server", path), project: stringField(o, "project", path) };
}

/** A server URL in one spelling: scheme and host in lower case, no default port, no trailing slash. */
export function normalServerUrl(url: string): string {
  if (!URL.canParse(url)) return url.trim().replace(/\/+$/, "");
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== "" ? v.trim() : undefined;
}

export function resolveSettings(opts: { flags?: { server?: string; project?: string }; env?: Env; cwd?: string } = {}): ResolvedSettings {
  const env = opts.env ?? process.env;
  const projectPath = findProjectFile(opts.cwd ?? process.cwd());
  const projectFile = projectPath ? readProjectFile(projectPath) : {};
  const credsPath = credentialsPath(env);
  const creds = readJsonObject(credsPath);
  const cfgPath = machineConfigPath(env);
  const cfg = readJsonObject(cfgPath);

  const pick = (candidates: [string | undefined, Source, string][]): Setting | null => {
    for (const [value, source, from] of candidates) if (value !== undefined) return { value, source, from };
    return null;
  };
  const server = pick([
    [nonEmpty(opts.flags?.server), "flag", "--server"],
    [nonEmpty(env.SVC_SERVER), "env", "SVC_SERVER"],
    [projectFile.server, "project-file", projectPath ?? ".svc.json"],
    [stringField(cfg, "server", cfgPath), "machine-config", cfgPath],
  ]) ?? { value: DEFAULT_SERVER, source: "default", from: "built-in default" };
  if (!/^https?:\/\/[^\s/]+/i.test(server.value) || !URL.canParse(server.value)) {
    throw new SettingsError(`the server "${server.value}" (from ${server.from}) must be an http:// or https:// URL`);
  }
  // A key saved on this machine goes only to the server it was saved for, never to whatever server a flag, the
  // environment or a repository's .svc.json names; SVC_API_KEY is set for the server at hand and goes anywhere.
  // A saved key without a server of its own belongs to the machine config's server (else the default).
  const machineServer = stringField(cfg, "server", cfgPath) ?? DEFAULT_SERVER;
  const saved: SavedKey[] = [];
  const loginKey = stringField(creds, "key", credsPath);
  if (loginKey) saved.push({ key: loginKey, server: stringField(creds, "server", credsPath) ?? machineServer, source: "login", from: credsPath });
  const machineKey = stringField(cfg, "api_key", cfgPath);
  if (machineKey) saved.push({ key: machineKey, server: machineServer, source: "machine-config", from: cfgPath });
  const target = normalServerUrl(server.value);
  const savedFor = (source: Source) => saved.find((k) => k.source === source && normalServerUrl(k.server) === target)?.key;
  const key = pick([
    [savedFor("login"), "login", credsPath],
    [nonEmpty(env.SVC_API_KEY), "env", "SVC_API_KEY"],
    [savedFor("machine-config"), "machine-config", cfgPath],
  ]);
  const withheld = key ? undefined : saved.find((k) => normalServerUrl(k.server) !== target);
  const project = pick([
    [nonEmpty(opts.flags?.project), "flag", "--project"],
    [nonEmpty(env.SVC_PROJECT), "env", "SVC_PROJECT"],
    [projectFile.project, "project-file", projectPath ?? ".svc.json"],
  ]);
  const withheldKey = withheld
    ? `the key saved ${withheld.source === "login" ? "by `svc login`" : `in ${withheld.from}`} is for ${normalServerUrl(withheld.server)}, ` +
      `so it is not sent to ${target} (from ${server.from}): set SVC_API_KEY to a key of that server, or run \`svc login --server ${target}\``
    : null;
  return { server: { ...server, value: target }, key, project, withheldKey };
}
