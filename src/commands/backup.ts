// `svc admin backup` and `svc admin restore`: a consistent online copy of the database (VACUUM INTO) with the
// artifacts of the runs it contains, and its restoration into a data directory.
import { Database } from "bun:sqlite";
import { copyFileSync, cpSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { backupDatabase, databasePath } from "../db/database";
import { migrations } from "../db/migrations";
import { UsageError } from "../../cli/usage";

export interface BackupResult {
  file: string;
  bytes: number;
  runsWithArtifacts: number;
}

const artifactsBeside = (file: string) => `${file}.artifacts`;

/** Copies without migrating: a newer svc taking a backup must not change the schema under a running older one. */
export function backupDataDir(dataDir: string, outFile: string, busyTimeoutMs: number): BackupResult {
  const source = databasePath(dataDir);
  if (!existsSync(source)) throw new UsageError(`no database at ${source}: check --data-dir or --config`);
  if (existsSync(outFile)) throw new UsageError(`${outFile} already exists; choose a new --out file`);
  if (existsSync(artifactsBeside(outFile))) throw new UsageError(`${artifactsBeside(outFile)} already exists; choose a new --out file`);
  const partial = `${outFile}.partial`;
  rmSync(partial, { force: true });
  const sqlite = new Database(source, { readwrite: true, create: false });
  try {
    sqlite.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    backupDatabase(sqlite, partial);
  } catch (e) {
    rmSync(partial, { force: true });
    throw new UsageError(`backup of ${source} failed: ${(e as Error).message}`);
  } finally {
    sqlite.close();
  }
  // Artifacts are files written once per run: copying those of the runs in the snapshot keeps the pair consistent.
  const copy = new Database(partial, { readonly: true });
  let runIds: string[];
  try {
    runIds = copy.query<{ id: string }, []>("SELECT id FROM runs").all().map((r) => r.id);
  } finally {
    copy.close();
  }
  let runsWithArtifacts = 0;
  for (const id of runIds) {
    const dir = join(dataDir, "artifacts", id);
    if (!existsSync(dir)) continue;
    cpSync(dir, join(artifactsBeside(outFile), id), { recursive: true });
    runsWithArtifacts++;
  }
  renameSync(partial, outFile);
  return { file: outFile, bytes: statSync(outFile).size, runsWithArtifacts };
}

/** Refuses a file that is not an intact svc database, or one written by a newer svc. */
function checkBackup(file: string): void {
  let db: Database;
  try {
    db = new Database(file, { readonly: true });
  } catch (e) {
    throw new UsageError(`${file} cannot be opened as a SQLite database: ${(e as Error).message}`);
  }
  try {
    const integrity = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    if (integrity.length !== 1 || integrity[0]?.integrity_check !== "ok") throw new UsageError(`${file} is damaged: ${integrity.map((r) => r.integrity_check).join("; ")}`);
    const names = db.query<{ name: string }, []>("SELECT name FROM kysely_migration").all().map((r) => r.name);
    const unknown = names.filter((n) => !(n in migrations));
    if (unknown.length > 0) throw new UsageError(`${file} was written by a newer version of svc (migrations ${unknown.join(", ")}); restore it with that version or newer`);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`${file} is not an svc backup: ${(e as Error).message}`);
  } finally {
    db.close();
  }
}

export interface RestoreResult {
  database: string;
  movedAside: string | null;
  artifactsRestored: boolean;
}

/** With `force`, what was in the data directory is moved into `replaced-<time>/` rather than deleted. */
export function restoreDataDir(fromFile: string, dataDir: string, force: boolean): RestoreResult {
  if (!existsSync(fromFile) || !statSync(fromFile).isFile()) throw new UsageError(`${fromFile} does not exist`);
  checkBackup(fromFile);
  const target = databasePath(dataDir);
  const artifacts = join(dataDir, "artifacts");
  const present = [target, `${target}-wal`, `${target}-shm`, artifacts].filter((p) => existsSync(p));
  if (present.includes(target) && !force) {
    throw new UsageError(`${dataDir} already holds a database; stop the server and add --force to replace it (the current data is kept in ${dataDir}/replaced-<time>/)`);
  }
  mkdirSync(dataDir, { recursive: true });
  let movedAside: string | null = null;
  if (present.length > 0) {
    movedAside = join(dataDir, `replaced-${new Date().toISOString().replace(/[:.]/g, "-")}`);
    mkdirSync(movedAside);
    for (const p of present) renameSync(p, join(movedAside, p.slice(dataDir.length).replace(/^[\\/]+/, "")));
  }
  const restoring = `${target}.restoring`;
  copyFileSync(fromFile, restoring);
  renameSync(restoring, target);
  const savedArtifacts = artifactsBeside(fromFile);
  const artifactsRestored = existsSync(savedArtifacts);
  if (artifactsRestored) cpSync(savedArtifacts, artifacts, { recursive: true });
  return { database: target, movedAside, artifactsRestored };
}
