// The server's configuration: every key, its type and default. Validated at start.
import { availableParallelism } from "node:os";
import { z } from "zod";

const bool = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no", "on", "off"])])
  .transform((v) => (typeof v === "boolean" ? v : ["true", "1", "yes", "on"].includes(v)));
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * What is wrong with an object key prefix, or null: a leading "/", or an empty, "." or ".." segment, which a
 * path-normalising server or proxy would resolve outside the prefix (or the bucket).
 */
export function objectPrefixProblem(prefix: string): string | null {
  if (prefix.startsWith("/")) return "must not start with /";
  const segments = prefix.split("/");
  // "svc/" ends with an empty segment: the one place one is allowed.
  const inner = segments.slice(0, -1);
  const last = segments.at(-1);
  if (inner.some((s) => s === "" || s === "." || s === "..") || last === "." || last === "..") return 'must not hold an empty, "." or ".." segment';
  return null;
}

export const ConfigSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  port: int(0, 65535).default(8080),
  data_dir: z.string().min(1).default("./svc-data"),
  base_url: z.string().url().optional().describe("Public URL of the service, used in links and install commands"),
  trust_proxy: bool.default(false),
  max_body_bytes: int(1024, 1024 * 1024 * 1024).default(1024 * 1024),
  log_level: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  busy_timeout_ms: int(0, 600_000).default(5000),
  database: z
    .strictObject({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\//, "a PostgreSQL URL: postgres://user:password@host:port/database")
        .optional()
        .describe("PostgreSQL to use instead of SQLite in the data directory (postgres://user:password@host:port/database)"),
    })
    .prefault({}),
  rate_limit: z
    .strictObject({
      enabled: bool.default(true),
      per_ip_per_hour: int(1, 100_000_000).default(10_000),
      per_workspace_per_hour: int(1, 100_000_000).default(5_000),
    })
    .prefault({}),
  runner: z
    .strictObject({
      concurrency: int(1, 256).default(4),
      workspace_concurrency: int(0, 256).default(0).describe("At most this many runs of one workspace at once (runs beyond it stay queued); 0: no cap"),
      local: bool.default(true).describe("false: the server executes no runs itself; it queues and records, and runners (svc runner) execute"),
      lease_ms: int(1000, 600_000)
        .default(30_000)
        .describe("How long a remote runner's claim on a run (on PostgreSQL, also a node's) lasts without a heartbeat"),
      /** Worker processes that execute runs; the `concurrency` slots are spread over them. */
      workers: int(1, 256).default(availableParallelism()),
      browser_path: z.string().optional(),
      default_timeout_ms: int(1000, 3_600_000).default(300_000),
      shutdown_grace_ms: int(0, 600_000).default(10_000),
      response_excerpt_bytes: int(0, 10_000_000).default(8192),
      max_response_bytes: int(1024, 1024 * 1024 * 1024).default(32 * 1024 * 1024),
    })
    .prefault({}),
  generation: z
    .strictObject({
      crawl_max_pages: int(1, 1000).default(10),
      llm: z
        .strictObject({
          base_url: z.string().url().optional(),
          model: z.string().optional(),
          api_key_env: z.string().optional(),
          timeout_ms: int(1000, 600_000).default(60_000),
        })
        .prefault({}),
    })
    .prefault({}),
  assistant: z
    .strictObject({
      base_url: z.string().url().optional().describe("OpenAI-compatible endpoint of the in-app assistant's model (default: [generation.llm] base_url)"),
      model: z.string().optional().describe("The assistant's model (default: [generation.llm] model)"),
      api_key_env: z.string().optional().describe("The NAME of the environment variable holding the model's API key (default: [generation.llm] api_key_env)"),
      max_steps: int(1, 50).default(8).describe("At most this many tool steps (model turns that call tools) per message"),
      max_tokens: int(16, 100_000).default(1024).describe("max_tokens of each model turn"),
      timeout_ms: int(1000, 600_000).default(60_000).describe("The whole answer to one message, model turns and tools together, within this long"),
    })
    .prefault({}),
  alerts: z
    .strictObject({
      retry_first_ms: int(100, 3_600_000).default(5000).describe("A failed delivery is tried again after this long, then with doubling delays"),
      retry_max_attempts: int(1, 50).default(5).describe("Attempts before a delivery is marked failed"),
      timeout_ms: int(100, 600_000).default(10_000).describe("How long one attempt may take"),
      smtp: z
        .strictObject({
          host: z.string().min(1).optional().describe("The SMTP server email alerts go through; email channels need it"),
          port: int(1, 65535).default(587),
          secure: bool.default(false).describe("TLS from the start (port 465); otherwise STARTTLS when the server offers it"),
          user: z.string().min(1).optional(),
          password: z.string().min(1).optional().describe("Better given as SVC_ALERTS_SMTP_PASSWORD than in the file"),
          from: z.string().min(3).default("svc <svc@localhost>"),
        })
        .prefault({}),
    })
    .prefault({}),
  history: z
    .strictObject({
      window_runs: int(2, 1000).default(20).describe("How many of an automation's latest runs its health counts"),
      flaky_flips: int(1, 1000).default(3).describe("Status flips among those runs that make an automation flaky"),
    })
    .prefault({}),
  retention: z
    .strictObject({
      run_days: int(0, 36_500).default(90).describe("Runs older than this many days are removed (0: no age limit)"),
      max_runs_per_automation: int(0, 100_000_000).default(1000).describe("An automation's older runs beyond this many are removed (0: no limit)"),
    })
    .prefault({}),
  tls: z
    .strictObject({ cert: z.string().optional(), key: z.string().optional() })
    // One without the other would quietly serve plain HTTP where HTTPS was meant.
    .refine((t) => (t.cert === undefined) === (t.key === undefined), {
      message: "tls.cert and tls.key go together: set both (HTTPS) or neither (plain HTTP, or TLS at a proxy)",
      path: ["cert"],
    })
    .prefault({}),
  artifacts: z
    .strictObject({
      s3: z
        .strictObject({
          bucket: z.string().min(1).optional().describe("Keep run artifacts (screenshots) as objects in this S3-compatible bucket instead of in the database"),
          endpoint: z
            .string()
            .url()
            .regex(/^https?:\/\//, "an http(s) URL")
            .optional()
            .describe("The S3-compatible endpoint (MinIO, Ceph, R2, …); default: AWS S3 in `region`"),
          region: z.string().min(1).default("us-east-1"),
          prefix: z
            .string()
            .max(200)
            .regex(/^[A-Za-z0-9!_.*'()/-]*$/, "letters, digits and !_.*'()/- only")
            .refine((p) => objectPrefixProblem(p) === null, { error: (i) => `a plain key start: it ${objectPrefixProblem(String(i.input))}` })
            .default("")
            .describe("Object keys start with this (e.g. svc/): several installations can share a bucket"),
          access_key_id: z
            .string()
            .min(1)
            .optional()
            .describe(
              "Default: AWS_ACCESS_KEY_ID (or S3_ACCESS_KEY_ID) of the environment; with none, the machine's role (container credentials or EC2 instance metadata)",
            ),
          session_token: z
            .string()
            .min(1)
            .optional()
            .describe("For temporary credentials; default: AWS_SESSION_TOKEN (or S3_SESSION_TOKEN) of the environment"),
          secret_access_key: z
            .string()
            .min(1)
            .optional()
            .describe("Better given as SVC_ARTIFACTS_S3_SECRET_ACCESS_KEY than in the file; default: AWS_SECRET_ACCESS_KEY (or S3_SECRET_ACCESS_KEY)"),
          virtual_hosted_style: bool.default(false).describe("Address the bucket as BUCKET.endpoint instead of endpoint/BUCKET"),
        })
        .prefault({}),
    })
    .prefault({}),
  metrics: z.strictObject({ token: z.string().optional() }).prefault({}),
  secrets: z
    .strictObject({
      key_file: z.string().min(1).optional().describe("The key that encrypts environment secrets; default: secrets.key in the data directory"),
    })
    .prefault({}),
});

export type Config = z.output<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
