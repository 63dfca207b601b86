// The server's configuration: every key, its type and default. Validated at start.
import { z } from "zod";

const bool = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no", "on", "off"])])
  .transform((v) => (typeof v === "boolean" ? v : ["true", "1", "yes", "on"].includes(v)));
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

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
  tls: z.strictObject({ cert: z.string().optional(), key: z.string().optional() }).prefault({}),
  metrics: z.strictObject({ token: z.string().optional() }).prefault({}),
  secrets: z
    .strictObject({
      key_file: z.string().min(1).optional().describe("The key that encrypts environment secrets; default: secrets.key in the data directory"),
    })
    .prefault({}),
});

export type Config = z.output<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
