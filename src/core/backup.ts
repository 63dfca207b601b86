// Backups of a data directory: a consistent online copy of the database with the artifacts of the runs it
// contains, and its restoration. The copy itself is the storage dialect's; the rules about files are here.
import { dataDirHolder } from "../data-dir-lock";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { databasePath } from "../db/database";
import { migrations } from "../db/migrations";
import { backupSqliteFile, readSqliteBackup, runIdsInSqliteFile, UnreadableBackupError } from "../db/sqlite";

/** A refusal the operator can act on (the message says what to change). */
export class BackupError extends Error {}

export interface BackupResult {
  file: string;
  bytes: number;
  runsWithArtifacts: number;
}

const artifactsBeside = (file: string) => `${file}.artifacts`;

/** Copies without migrating: a newer svc taking a backup must not change the schema under a running older one. */
export function backupDataDir(dataDir: string, outFile: string, busyTimeoutMs: number): BackupResult {
  const source = databasePath(dataDir);
  if (!existsSync(source)) throw new BackupError(`no database at ${source}: check --data-dir or --config`);
  if (existsSync(outFile)) throw new BackupError(`${outFile} already exists; choose a new --out file`);
  if (existsSync(artifactsBeside(outFile))) throw new BackupError(`${artifactsBeside(outFile)} already exists; choose a new --out file`);
  const partial = `${outFile}.partial`;
  rmSync(partial, { force: true });
  try {
    // The copy holds password, key and session hashes and the sealed secrets: readable by its owner alone, from
    // its first byte (as the data directory is).
    writeFileSync(partial, "", { mode: 0o600 });
    backupSqliteFile(source, partial, busyTimeoutMs);
    chmodSync(partial, 0o600);
  } catch (e) {
    rmSync(partial, { force: true });
    throw new BackupError(`backup of ${source} failed: ${(e as Error).message}`);
  }
  // Artifacts are files written once per run: copying those of the runs in the snapshot keeps the pair consistent.
  const runIds = runIdsInSqliteFile(partial);
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
  let contents: ReturnType<typeof readSqliteBackup>;
  try {
    contents = readSqliteBackup(file);
  } catch (e) {
    if (e instanceof UnreadableBackupError) throw new BackupError(`${file} cannot be opened as a SQLite database: ${e.message}`);
    throw new BackupError(`${file} is not an svc backup: ${(e as Error).message}`);
  }
  if (contents.damage.length > 0) throw new BackupError(`${file} is damaged: ${contents.damage.join("; ")}`);
  const unknown = contents.migrations.filter((n) => !(n in migrations));
  if (unknown.length > 0)
    throw new BackupError(`${file} was written by a newer version of svc (migrations ${unknown.join(", ")}); restore it with that version or newer`);
}

export interface RestoreResult {
  database: string;
  movedAside: string | null;
  artifactsRestored: boolean;
}

/** With `force`, what was in the data directory is moved into `replaced-<time>/` rather than deleted. */
export function restoreDataDir(fromFile: string, dataDir: string, force: boolean): RestoreResult {
  if (!existsSync(fromFile) || !statSync(fromFile).isFile()) throw new BackupError(`${fromFile} does not exist`);
  checkBackup(fromFile);
  const target = databasePath(dataDir);
  const artifacts = join(dataDir, "artifacts");
  const present = [target, `${target}-wal`, `${target}-shm`, artifacts].filter((p) => existsSync(p));
  // Writes a running server acknowledged after the restore would go into the file moved aside, and be lost.
  const holder = dataDirHolder(dataDir);
  if (holder !== null) throw new BackupError(`svc serve (pid ${holder}) is running on ${dataDir}: stop it before restoring into its data directory`);
  if (present.includes(target) && !force) {
    throw new BackupError(
      `${dataDir} already holds a database; stop the server and add --force to replace it (the current data is kept in ${dataDir}/replaced-<time>/)`,
    );
  }
  // As svc serve makes them: the directory and the database its user's alone (they hold password, key and session
  // hashes and the sealed secrets), whatever the umask and whatever mode the backup file was given where it was kept.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let movedAside: string | null = null;
  if (present.length > 0) {
    movedAside = join(dataDir, `replaced-${new Date().toISOString().replace(/[:.]/g, "-")}`);
    mkdirSync(movedAside, { mode: 0o700 });
    for (const p of present) renameSync(p, join(movedAside, p.slice(dataDir.length).replace(/^[\\/]+/, "")));
  }
  const restoring = `${target}.restoring`;
  copyFileSync(fromFile, restoring);
  chmodSync(restoring, 0o600);
  renameSync(restoring, target);
  const savedArtifacts = artifactsBeside(fromFile);
  const artifactsRestored = existsSync(savedArtifacts);
  if (artifactsRestored) cpSync(savedArtifacts, artifacts, { recursive: true });
  return { database: target, movedAside, artifactsRestored };
}
