// Where environment secrets are sealed and opened: the key at start (created on first start, checked against the
// database), sealing what an older svc stored in plain text, and the values a run needs.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import type { Config } from "../../../config/schema";
import type { Db } from "../../db/database";
import { log } from "../../logging";
import { loadSecretsKey, type SecretBox, SecretsKeyError, secretsKeyPath } from "../../security/secret-box";
import { StringMap } from "../shared/columns";
import * as settings from "../shared/settings-store";
import { nowIso } from "../shared/time";
import { sqlDialect } from "../storage";
import { readJsonColumnOr } from "../shared/json";
import * as store from "./store";

/** What binds a sealed value to its environment and name. */
const placeOf = (environmentId: string, name: string) => `${environmentId}\u0000${name}`;

/** An environment's secrets by name, every value sealed. */
export function sealValues(box: SecretBox, environmentId: string, values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(values)) out[name] = box.seal(v, placeOf(environmentId, name));
  return out;
}

/** The stored JSON of an environment's secrets, every value sealed. */
export function sealSecrets(box: SecretBox, environmentId: string, values: Record<string, string>): string {
  return JSON.stringify(sealValues(box, environmentId, values));
}

/**
 * The stored values by name (sealed, or plain text in a row not sealed yet): names are never secret. For the run
 * queue's claim and the sealing at start, a damaged value reads as no secrets; operations read the column
 * checked (environments/operations.ts).
 */
export function storedSecrets(row: { secrets: string }): Record<string, string> {
  return readJsonColumnOr(StringMap, row.secrets, {});
}

export interface OpenedSecrets {
  values: Record<string, string>;
  /** Names whose value does not open with this key (the row was altered or copied from another database). */
  unreadable: string[];
}

export function openSecrets(box: SecretBox, row: { id: string; secrets: string; secrets_sealed: number }): OpenedSecrets {
  const stored = storedSecrets(row);
  if (row.secrets_sealed !== 1) return { values: stored, unreadable: [] };
  const values: Record<string, string> = {};
  const unreadable: string[] = [];
  for (const [name, sealed] of Object.entries(stored)) {
    const v = box.open(sealed, placeOf(row.id, name));
    if (v === null) unreadable.push(name);
    else values[name] = v;
  }
  return { values, unreadable };
}

/** The instance setting that keeps the secrets key check (see SecretBox.keyCheck). */
const KEY_CHECK = "secrets_key_check";

const SAME_KEY_HINT =
  "every node of one database needs the same key: copy the key file of the node that started first to this one and point secrets.key_file (SVC_SECRETS_KEY_FILE) at it";

/**
 * At start: the key (created when the database holds no sealed secret yet), refused when it does not open the
 * sealed secrets there are, and then every environment still in plain text (written by an older svc) sealed.
 *
 * On PostgreSQL, where several nodes share the database, the database also keeps a check of the key (written by
 * the first node to start): a node whose key is another one — or whose key file is missing — refuses to start
 * before it writes anything, even while no environment holds a secret yet.
 */
export async function openSecretsKey(db: Db, config: Config): Promise<SecretBox> {
  const path = secretsKeyPath(config.data_dir, config.secrets.key_file);
  const sample = await store.sealedSecretsSample(db);
  const shared = sqlDialect(db) === "postgres";
  const check = shared ? await settings.findSetting(db, KEY_CHECK) : undefined;
  const refuseMissing =
    sample !== undefined
      ? `the database holds encrypted secrets but the secrets key ${path} does not exist: restore the key file kept with this database (or set secrets.key_file to where it is); without it the secrets cannot be read`
      : check !== undefined
        ? `the secrets key ${path} does not exist, but other nodes of this database already use a key: ${SAME_KEY_HINT}`
        : null;
  // On SQLite the data directory was made for the database. On PostgreSQL it may not exist yet: a first node that
  // is to keep its new key there makes it, as private as SQLite's (a key_file elsewhere must name a directory that is).
  if (refuseMissing === null && config.secrets.key_file === undefined && !existsSync(path)) {
    try {
      mkdirSync(config.data_dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new SecretsKeyError(`cannot create the data directory ${config.data_dir} for the secrets key: ${(e as Error).message}`);
    }
  }
  const { box, created, looseMode } = loadSecretsKey(path, refuseMissing);
  const refuse = (message: string): never => {
    // A key this start created and cannot use is not left behind.
    if (created) rmSync(path, { force: true });
    throw new SecretsKeyError(message);
  };
  if (sample && openSecrets(box, sample).unreadable.length > 0) {
    refuse(
      `the secrets key ${path} does not open the secrets in this database: it belongs with another database; restore the key file kept with this one (or set secrets.key_file to it)`,
    );
  }
  if (shared) {
    const kept = check ?? (await settings.keepSettingOnce(db, KEY_CHECK, box.keyCheck(), nowIso()));
    if (kept !== box.keyCheck()) refuse(`the secrets key ${path} is not the key the other nodes of this database use: ${SAME_KEY_HINT}`);
  }
  if (created) log.info("created the secrets key", { path });
  if (looseMode) log.warn("the secrets key can be read by other users: chmod 600 it", { path });
  const plain = await store.plainSecretRows(db);
  if (plain.length === 0) return box;
  // The plain text must not stay behind in the file's free space or in the write-ahead log.
  await store.erasingReplacedValues(db, () =>
    db.transaction().execute(async (trx) => {
      for (const row of plain) await store.storeSealedSecrets(trx, row.id, sealSecrets(box, row.id, storedSecrets(row)));
    }),
  );
  log.info("encrypted the secrets of environments stored before secrets were encrypted", { environments: plain.length });
  return box;
}
