// Secret values in the model's tool calls — one-run and environment secrets (`secrets`), an alert channel's
// `secret` and its `url` (a Slack incoming webhook's is a secret) — never kept or shown in plain text: sealed with
// the server's secrets box in a held action's stored arguments, masked wherever arguments are shown or kept in the
// conversation's history, and opened only to run the action once the person confirms it.
import type { SecretBox } from "../../security/secret-box";

/** What a secret value looks like wherever it is shown: as run results mask them. */
export const MASK = "***";

type Args = Record<string, unknown>;

/** A sealed value in stored arguments: an object no argument that holds a secret (a string) could be. */
interface Sealed {
  $sealed: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isSealed = (v: unknown): v is Sealed => isRecord(v) && typeof v.$sealed === "string" && Object.keys(v).length === 1;

/**
 * `args` with each secret value replaced by `f(value, path)`. A null among `secrets` removes an environment's
 * secret: it says nothing and stays. Every channel's url counts: the kind of the channel an update names is not in
 * its arguments, and a webhook's url masked costs the person less than a Slack one shown.
 */
function mapSecrets(tool: string, args: Args, f: (value: unknown, path: string) => unknown): Args {
  const out = { ...args };
  if (isRecord(out.secrets)) {
    out.secrets = Object.fromEntries(Object.entries(out.secrets).map(([k, v]) => [k, v === null ? null : f(v, `secrets.${k}`)]));
  }
  if (out.secret !== undefined && out.secret !== null) out.secret = f(out.secret, "secret");
  if (tool.endsWith("_alert_channel") && out.url !== undefined && out.url !== null) out.url = f(out.url, "url");
  return out;
}

/** The arguments as shown and kept: each secret value (plain or sealed) is `***`. */
export function maskSecrets(tool: string, args: Args): Args {
  return mapSecrets(tool, args, () => MASK);
}

/** The JSON arguments of a model's tool call as kept in the history: masked, when they are a JSON object. */
export function maskCallArguments(tool: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return raw;
  try {
    const v = JSON.parse(raw) as unknown;
    return isRecord(v) ? JSON.stringify(maskSecrets(tool, v)) : raw;
  } catch {
    return raw;
  }
}

/** The additional data of a sealed value: it opens only in the action and at the path it was sealed for. */
const placeOf = (actionId: string, path: string) => `assistant action ${actionId}\n${path}`;

/** The arguments as a held action stores them: each secret value sealed. */
export function sealSecrets(box: SecretBox, actionId: string, tool: string, args: Args): Args {
  return mapSecrets(tool, args, (v, path) => (typeof v === "string" ? { $sealed: box.seal(v, placeOf(actionId, path)) } : v));
}

/** The arguments to run the action with, its secrets opened; a string says which one does not open (another key). */
export function openSecrets(box: SecretBox, actionId: string, tool: string, args: Args): Args | string {
  let broken: string | null = null;
  const opened = mapSecrets(tool, args, (v, path) => {
    if (!isSealed(v)) return v;
    const value = box.open(v.$sealed, placeOf(actionId, path));
    if (value === null) broken ??= path;
    return value;
  });
  return broken === null ? opened : `the secret ${broken} of this action does not open with this server's secrets key; ask again`;
}
