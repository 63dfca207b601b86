// `svc admin …`: administration acting directly on the data directory (works with the server stopped or running).
// Where an operation exists for what a command does, the command calls it in-process (core/call.ts), so its
// rules are the API's; creating a user (and a new workspace), backup and restore have no operation.
import type { Command } from "commander";
import type { Core } from "../core/context";
import { AppError } from "../manifest/errors";
import { setLogLevel } from "../logging";
import { UsageError } from "../../cli/usage";

function parseExpiry(text: string): string {
  const m = /^(\d+)\s*([mhdwy])$/.exec(text.trim());
  if (m) {
    const n = Number(m[1]);
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 }[m[2] as "m"];
    if (n <= 0) throw new UsageError("--expires-in must be positive");
    return new Date(Date.now() + n * unit).toISOString();
  }
  // Otherwise only an ISO 8601 date or date-time (Date.parse alone would take "3z" or "1" as a year).
  const t = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  if (Number.isNaN(t)) throw new UsageError(`--expires-in "${text}" is not a duration like 30d, 12h, 1y or a date like 2027-01-31`);
  if (t <= Date.now()) throw new UsageError(`--expires-in "${text}" is in the past`);
  return new Date(t).toISOString();
}

/**
 * Runs `fn` on the store the configuration names. `fresh`: the command may make the database (create-user, the
 * first one); any other on a SQLite data directory without one is refused, not given an empty database to look in.
 */
async function withCore<T>(o: { dataDir?: string; config?: string }, fn: (core: Core) => Promise<T>, fresh = false): Promise<T> {
  const { loadConfig } = await import("../../config/load");
  const { missingSqliteDatabase, withAdminCore } = await import("../core/admin");
  // A command prints what it did itself; the operations' info-level events (a key created) are the server's log.
  setLogLevel("warn");
  const config = loadConfig({ file: o.config, flags: { data_dir: o.dataDir } });
  const missing = fresh ? null : missingSqliteDatabase(config);
  if (missing) throw new UsageError(`no database at ${missing}: check --data-dir or --config (svc admin create-user makes the first one)`);
  return withAdminCore(config, fn);
}

async function readStdin(): Promise<string> {
  const text = await new Response(Bun.stdin.stream()).text();
  return text.replace(/\r?\n$/, "");
}

/**
 * The password of --password-stdin: piped in (`echo … | svc admin create-user …`), or at a terminal asked for with
 * its input hidden (read to an end of input there, it waited without a word, showing the password as it was typed).
 */
async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) return readStdin();
  const { promptHidden } = await import("../../cli/auth");
  return promptHidden("Password (input hidden): ");
}

const ROLES = ["owner", "admin", "member"] as const;

/** What backup and restore say when the store is PostgreSQL (database.url): its own tools do both. */
const POSTGRES_BACKUP =
  "the database is PostgreSQL (database.url / SVC_DATABASE_URL): back it up with pg_dump (pg_dump --format=custom --file=svc.dump URL) and restore with pg_restore into an empty database (pg_restore --dbname=URL svc.dump); keep the secrets key with it (see docs/operations.md)";

/** A core rule's refusal (a 400 over HTTP), told as a usage error (exit 2) naming the flag. */
function asUsage<T>(flag: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if ((e as Partial<AppError>).code === "invalid_request") throw new UsageError(`${flag}: ${(e as AppError).message}`);
    throw e;
  }
}

/** An operation's 400, told as a usage error (exit 2) naming the flag its first detail is about. */
function flagRefusal(e: unknown, flags: Record<string, string>): unknown {
  if (!(e instanceof AppError) || e.code !== "invalid_request") return e;
  const detail = e.details?.[0];
  const flag = detail ? flags[detail.path] : undefined;
  return new UsageError(flag && detail ? `${flag}: ${detail.message}` : e.message);
}

export function registerAdmin(program: Command): void {
  const admin = program.command("admin").description("Server-side administration on the data directory");
  const common = (c: Command) => c.option("--data-dir <dir>", "data directory (default ./svc-data)").option("--config <file>", "config file");

  common(
    admin
      .command("create-user")
      .description("Create a user (and the workspace if needed) and make them a member")
      .requiredOption("--email <email>")
      .requiredOption("--name <name>")
      .requiredOption("--workspace <slug>")
      .option("--role <role>", "owner | admin | member", "owner")
      .option("--password-stdin", "read a password for the web application from standard input")
      .option("--if-first", "only when the installation has no user yet; otherwise change nothing and print nothing (first-start scripts)"),
  ).action(
    async (o: {
      email: string;
      name: string;
      workspace: string;
      role: string;
      passwordStdin?: boolean;
      ifFirst?: boolean;
      dataDir?: string;
      config?: string;
    }) => {
      if (!ROLES.includes(o.role as "owner")) throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
      const password = o.passwordStdin ? await readPassword() : undefined;
      const { checkEmail, checkNewPassword, checkWorkspaceSlug, createUserWithSetupToken } = await import("../core/access/users");
      const { configuredAddress } = await import("../core/address");
      // The core's rules for an email, a workspace slug and a password, checked before the database is opened.
      const workspace = asUsage("--workspace", () => checkWorkspaceSlug(o.workspace));
      asUsage("--email", () => checkEmail(o.email));
      if (password !== undefined) asUsage("--password-stdin", () => checkNewPassword(password));
      const { loadConfig } = await import("../../config/load");
      const config = loadConfig({ file: o.config, flags: { data_dir: o.dataDir } });
      // No operation creates a user together with a new workspace: this stays a core function of its own.
      const r = await withCore(
        o,
        (core) => createUserWithSetupToken(core.db, { email: o.email, name: o.name, workspace, role: o.role as "owner", password }, { onlyFirst: o.ifFirst }),
        true,
      );
      if (r === null) return;
      process.stdout.write(`${r.createdUser ? "created" : "updated"} user ${o.email} (${r.userId}) as ${o.role} of workspace ${workspace}\n`);
      if (r.setupToken) {
        process.stdout.write(`password-setup link (one-time, valid 7 days): ${configuredAddress(config)}/setup-password?token=${r.setupToken}\n`);
        // Without base_url the link names the listening address this command reads (its config and SVC_* variables),
        // which is not where the person it is for reaches svc when svc runs behind a proxy, in a container or on another port.
        if (!config.base_url) {
          process.stdout.write(
            "(the address in it is where this configuration says svc listens: give the person the address they reach svc at, or set base_url (SVC_BASE_URL) and links use it)\n",
          );
        }
      } else if (r.pendingLink) process.stdout.write(`${o.email} has an unused password-setup link already; it stays valid until it is used or expires\n`);
    },
  );

  common(
    admin
      .command("create-key")
      .description("Create an API key for a member; prints the full key once")
      .requiredOption("--email <email>")
      .requiredOption("--workspace <slug>")
      .option("--name <name>", "a name for the key", "admin-created key")
      .option("--expires-in <duration>", "e.g. 30d, 12h, 1y, or a date")
      .option("--json", "print {id, key, prefix} as JSON"),
  ).action(async (o: { email: string; workspace: string; name: string; expiresIn?: string; json?: boolean; dataDir?: string; config?: string }) => {
    const expiresAt = o.expiresIn ? parseExpiry(o.expiresIn) : null;
    const { callOperation } = await import("../core/call");
    const { findMembership, onBehalfOf } = await import("../core/admin");
    const created = await withCore(o, async (core) => {
      const member = await findMembership(core, o.email, o.workspace);
      if (!member) throw new UsageError(`no user ${o.email} in workspace ${o.workspace}`);
      if (member.role === null) throw new UsageError(`${o.email} is not a member of workspace ${o.workspace}`);
      // create_key as the member would through the web application: the same rules for a key's name and expiry.
      return callOperation(core, onBehalfOf(member), "createKey", { body: { name: o.name, expires_at: expiresAt } }).catch((e: unknown) => {
        throw flagRefusal(e, { "body.name": "--name", "body.expires_at": "--expires-in" });
      });
    });
    process.stdout.write(
      o.json ? `${JSON.stringify({ id: created.id, key: created.key, prefix: created.prefix, expires_at: created.expires_at })}\n` : `${created.key}\n`,
    );
  });

  common(admin.command("revoke-key").description("Revoke an API key by id").requiredOption("--id <keyId>")).action(
    async (o: { id: string; dataDir?: string; config?: string }) => {
      const { callOperation } = await import("../core/call");
      const { keyHolder } = await import("../core/admin");
      await withCore(o, async (core) => {
        const holder = await keyHolder(core, o.id);
        if (!holder) throw new UsageError(`no key ${o.id}`);
        // revoke_key as the key's holder would: a key is revoked by the one who holds it.
        await callOperation(core, holder, "revokeKey", { params: { keyId: o.id } });
      }).catch((e: Error) => {
        throw new UsageError(/not found/.test(e.message) ? `no key ${o.id}` : e.message);
      });
      process.stdout.write(`revoked ${o.id}\n`);
    },
  );

  common(
    admin
      .command("remove-member")
      .description("Remove a user from a workspace; their keys stop working at once")
      .requiredOption("--email <email>")
      .requiredOption("--workspace <slug>"),
  ).action(async (o: { email: string; workspace: string; dataDir?: string; config?: string }) => {
    const { callOperation } = await import("../core/call");
    const { findMembership, operatorIn } = await import("../core/admin");
    await withCore(o, async (core) => {
      const member = await findMembership(core, o.email, o.workspace);
      if (!member) throw new UsageError(`no user ${o.email} in workspace ${o.workspace}`);
      // remove_member with an owner's rights: the last owner still cannot be removed.
      await callOperation(core, operatorIn(member.workspaceId), "removeMember", { params: { userId: member.userId } }).catch((e: Error) => {
        throw new UsageError(e.message);
      });
    });
    process.stdout.write(`removed ${o.email} from ${o.workspace}\n`);
  });

  common(
    admin
      .command("create-runner-token")
      .description("Create a runner token for `svc runner`; prints the token once (server-wide, or for one workspace)")
      .requiredOption("--name <name>", "a name for the runner")
      .option("--labels <labels>", "comma-separated labels the runner offers, e.g. eu,office-net")
      .option("--workspace <slug>", "the runner only ever runs this workspace's runs (default: any workspace's)")
      .option("--json", "print {id, token} as JSON"),
  ).action(async (o: { name: string; labels?: string; workspace?: string; json?: boolean; dataDir?: string; config?: string }) => {
    const { Name, RunnerLabel } = await import("../manifest/define");
    const name = Name.safeParse(o.name);
    if (!name.success) throw new UsageError(`--name: ${name.error.issues[0]?.message ?? "invalid"}`);
    const labels: string[] = [];
    for (const text of (o.labels ?? "").split(",").filter((l) => l.trim() !== "")) {
      const label = RunnerLabel.safeParse(text);
      if (!label.success) throw new UsageError(`--labels: "${text}": ${label.error.issues[0]?.message ?? "invalid"}`);
      labels.push(label.data);
    }
    if (labels.length > 20) throw new UsageError("--labels: at most 20 labels");
    const { createRunnerToken } = await import("../core/runners/operations");
    const created = await withCore(o, async (core) => {
      let workspaceId: string | null = null;
      if (o.workspace !== undefined) {
        const ws = await core.db.selectFrom("workspaces").select("id").where("slug", "=", o.workspace).executeTakeFirst();
        if (!ws) throw new UsageError(`no workspace ${o.workspace}`);
        workspaceId = ws.id;
      }
      return createRunnerToken(core, { name: name.data, labels, workspaceId });
    });
    process.stdout.write(o.json ? `${JSON.stringify({ id: created.row.id, token: created.token })}\n` : `${created.token}\n`);
  });

  common(admin.command("revoke-runner").description("Revoke a runner's token by id; it stops claiming runs at once").requiredOption("--id <runnerId>")).action(
    async (o: { id: string; dataDir?: string; config?: string }) => {
      const { revokeRunnerById } = await import("../core/runners/operations");
      await withCore(o, async (core) => {
        const row = await core.db.selectFrom("runners").select("id").where("id", "=", o.id).executeTakeFirst();
        if (!row) throw new UsageError(`no runner ${o.id}`);
        await revokeRunnerById(core, o.id);
      });
      process.stdout.write(`revoked ${o.id}\n`);
    },
  );

  common(
    admin
      .command("backup")
      .description("Write a consistent copy of the database (run artifacts included, unless kept in an S3 bucket) while the server runs")
      .requiredOption("--out <file>", "the backup file to create (a plain SQLite database)"),
  ).action(async (o: { out: string; dataDir?: string; config?: string }) => {
    const { loadConfig } = await import("../../config/load");
    const { backupDataDir } = await import("./backup");
    const config = loadConfig({ file: o.config, flags: { data_dir: o.dataDir } });
    if (config.database.url) throw new UsageError(POSTGRES_BACKUP);
    const r = backupDataDir(config.data_dir, o.out, config.busy_timeout_ms);
    // Run artifacts are rows of the database; files an older svc left on disk (not yet moved in) are copied beside.
    const files = r.runsWithArtifacts > 0 ? `; artifacts of ${r.runsWithArtifacts} runs still on disk in ${r.file}.artifacts/` : "";
    // With [artifacts.s3] the file holds the artifacts' rows; their bytes are objects of the bucket, backed up with it.
    const artifacts = config.artifacts.s3.bucket
      ? `run artifacts kept in the bucket ${config.artifacts.s3.bucket} are not in it (back the bucket up with its own tools)`
      : "run artifacts included";
    process.stdout.write(`backed up ${config.data_dir} to ${r.file} (${r.bytes} bytes, ${artifacts}${files})\n`);
  });

  admin
    .command("migrate-to-postgres")
    .description("Copy an SQLite installation into an empty PostgreSQL database (named by database.url / SVC_DATABASE_URL), verified by counts")
    .requiredOption("--from <dir>", "the data directory of the SQLite installation (stop its server first)")
    .option("--config <file>", "config file (its database.url names the target)")
    .action(async (o: { from: string; config?: string }) => {
      const { loadConfig } = await import("../../config/load");
      const { CopyError, migrateToPostgres } = await import("../core/admin");
      setLogLevel("warn");
      const config = loadConfig({ file: o.config, flags: {} });
      const url = config.database.url;
      if (!url)
        throw new UsageError("name the PostgreSQL database to copy into with SVC_DATABASE_URL or database.url (postgres://user:password@host:port/database)");
      process.stdout.write("table                      sqlite   postgres\n");
      try {
        const r = await migrateToPostgres(o.from, url, {
          busyTimeoutMs: config.busy_timeout_ms,
          secretsKeyFile: config.secrets.key_file,
          onTable: (c) => process.stdout.write(`${c.table.padEnd(24)} ${String(c.sqlite).padStart(8)} ${String(c.postgres).padStart(10)}\n`),
        });
        const rows = r.counts.reduce((n, c) => n + c.sqlite, 0);
        const moved = r.artifactsMovedIn > 0 ? ` (${r.artifactsMovedIn} artifact files from ${o.from}/artifacts moved in first)` : "";
        process.stdout.write(`copied ${rows} rows of ${r.counts.length} tables; the counts match${moved}\n`);
        process.stdout.write(
          `the secrets key must travel too: copy ${r.secretsKey} to every node and point secrets.key_file / SVC_SECRETS_KEY_FILE at it, or the copied secrets cannot be read\n`,
        );
      } catch (e) {
        if (e instanceof CopyError) throw new UsageError(e.message);
        throw e;
      }
    });

  admin
    .command("restore")
    .description("Restore a backup into a data directory (stop the server that uses it first)")
    .requiredOption("--from <file>", "a file written by svc admin backup")
    .requiredOption("--data-dir <dir>", "the data directory to restore into")
    .option("--force", "replace an existing database; the current data is moved to DIR/replaced-<time>/")
    .action(async (o: { from: string; dataDir: string; force?: boolean }) => {
      const { restoreDataDir } = await import("./backup");
      const { migrateDataDir } = await import("../core/admin");
      const { loadConfig } = await import("../../config/load");
      if (loadConfig({ flags: { data_dir: o.dataDir } }).database.url) throw new UsageError(POSTGRES_BACKUP);
      const r = restoreDataDir(o.from, o.dataDir, o.force === true);
      // Opening applies the migrations a backup from an older svc lacks.
      await migrateDataDir(o.dataDir);
      if (r.movedAside) process.stdout.write(`moved the previous data to ${r.movedAside}\n`);
      process.stdout.write(
        `restored ${o.from} into ${r.database}${r.artifactsRestored ? " with its artifacts" : ""}; start it with: svc serve --data-dir ${o.dataDir}\n`,
      );
    });
}
