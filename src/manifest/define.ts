// The shape of an operation in the manifest, and the schemas shared by many of them.
import { z } from "zod";
import type { ErrorCode } from "./errors";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export interface Hints {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  /** Reaches outside svc (a webhook, a model) although it starts no work: MCP's openWorldHint. */
  openWorld?: boolean;
}

/** A response that is not JSON (JUnit XML, a screenshot): the handler returns the bytes and content type. */
export interface RawResponse {
  raw: true;
  contentType: string;
  description: string;
}

/** What a command's `--watch` follows to the end: the operation answers a run, a group run or a generation. */
export type WatchKind = "run" | "group_run" | "generation";

export interface CliSpec {
  /** Command words, e.g. ["automations", "show"]. */
  words: string[];
  /** Path parameters (other than `project`) and body fields taken as positional arguments, in order. */
  args?: string[];
  /** Flags named other than their field, by field name: `{ environment: "env" }` makes `--env`. */
  flags?: Record<string, string>;
  /** The command can follow what it started to the end (`--watch`, and `--junit` for runs and group runs). */
  watch?: WatchKind;
  /** The command's help line, when it says more than the operation's summary. */
  summary?: string;
  /** Beside the answer, the command shows where its server, key and project come from (to check a setup). */
  showsSettings?: boolean;
}

/**
 * An operation that may also answer as a server-sent event stream, when the request says `Accept:
 * text/event-stream`: the events it sends as its work goes on (`events`, by name), then `done` carrying exactly the
 * JSON body the plain call answers, or `error` in the error shape when it fails after the stream began. Errors
 * before the stream began are ordinary JSON answers with their status. A `delta` event's `{text}` is words to show
 * as they arrive (the CLI prints them on a terminal).
 */
export interface StreamSpec {
  description: string;
  events: Record<string, z.ZodType>;
}

export interface Operation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType | RawResponse | null = z.ZodType | RawResponse | null,
> {
  name: string;
  method: HttpMethod;
  /** OpenAPI-style path below /api/v1/ops, e.g. "/projects/{project}". */
  path: string;
  summary: string;
  description?: string;
  params: P;
  query: Q;
  body: B | null;
  /** JSON schema of the 2xx body, a raw body, or null for 204. */
  response: R;
  successStatus: 200 | 201 | 202 | 204;
  errors: ErrorCode[];
  hints: Hints;
  cli: CliSpec;
  /** POSTs that start work honour an Idempotency-Key header. */
  startsWork?: boolean;
  /** Only a signed-in person (web session) may call it, never an API key. */
  sessionOnly?: boolean;
  /**
   * The answer depends only on the workspace's stored records, so a GET may be answered from the response
   * cache until the database changes. Off unless declared: never for answers that differ by user or key.
   */
  cached?: boolean;
  /**
   * Never refused for the workspace's request budget (the per-IP limit still applies): stopping a key or a
   * member must keep working while that member's key spends the budget shared by the whole workspace.
   */
  budgetExempt?: boolean;
  /**
   * The answer is one stored record with a version: it carries an ETag, and a PATCH or DELETE honours If-Match
   * (its `headers` then take `if_match`; a stale tag is 412 precondition_failed).
   */
  versioned?: boolean;
  /** Request headers the operation reads, as fields (`if_match` is the If-Match header); null for none. */
  headers: z.ZodObject | null;
  /** The operation may answer as an event stream (see StreamSpec). */
  stream?: StreamSpec;
}

/** The If-Match a change of one versioned record may carry. */
export const IfMatchHeaders = z.object({
  if_match: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe("If-Match: the ETag of the version the change is made from; when the record has changed since, the change is refused (412 precondition_failed)"),
});

const EMPTY = z.object({});

type Opt<T> = T | undefined;

/** Declares an operation; missing schemas default to empty objects. */
export function defineOperation<
  P extends z.ZodType = typeof EMPTY,
  Q extends z.ZodType = typeof EMPTY,
  B extends z.ZodType = z.ZodNever,
  R extends z.ZodType | RawResponse | null = null,
>(op: {
  name: string;
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  successStatus?: 200 | 201 | 202 | 204;
  errors?: ErrorCode[];
  hints?: Hints;
  cli: CliSpec;
  startsWork?: boolean;
  sessionOnly?: boolean;
  cached?: boolean;
  budgetExempt?: boolean;
  versioned?: boolean;
  stream?: StreamSpec;
}): Operation<P, Q, B, R> {
  const params = (op.params ?? EMPTY) as P;
  const query = (op.query ?? EMPTY) as Q;
  return {
    ...op,
    params,
    query,
    body: (op.body as Opt<B>) ?? null,
    successStatus: op.successStatus ?? (op.response === null ? 204 : 200),
    errors: op.errors ?? [],
    hints: op.hints ?? {},
    headers: op.versioned && (op.method === "PATCH" || op.method === "DELETE") ? IfMatchHeaders : null,
  };
}

export const raw = (contentType: string, description: string): RawResponse => ({ raw: true, contentType, description });

// ---- shared schemas ----

export const Timestamp = z.string().describe("ISO-8601 UTC timestamp");
export const NullableTimestamp = Timestamp.nullable();

/** Path parameters are never a 400: a wrong-shaped id is simply not found. */
export const PathId = z.string().min(1).max(200);
/**
 * An id given as a list filter. An id is never a 400: one that names nothing (also a very long one) is a 404
 * naming the filter (src/core/scope.ts). The bound only keeps within what a request line can carry anyway.
 */
export const FilterId = z.string().max(16_384);
export const ProjectParams = z.object({ project: PathId.describe("Project id (prj_…) or slug") });

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe("Page size, 1–200"),
  cursor: z.string().max(512).optional().describe("The next_cursor of the previous page"),
});

/** The longest a read may wait for what it reads to end (a long-poll), in seconds. */
export const MAX_WAIT_SECONDS = 30;

/** `?wait=N` on the reads of things that end (runs, group runs, generations): a long-poll. */
export function waitQuery(what: string) {
  return z.object({
    wait: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .default(0)
      .describe(
        `Seconds to wait for the ${what} to end before answering, 0–${MAX_WAIT_SECONDS}: the answer comes as soon as it has ended (at once if it already has), else after that long with its current state`,
      ),
  });
}

export function page<T extends z.ZodType>(item: T, id: string) {
  return z.object({ data: z.array(item), next_cursor: z.string().nullable() }).meta({ id });
}

/**
 * What a one-line text shown as a name must not hold: the C0 and C1 control characters (a terminal takes ESC, BEL
 * or CSI as commands: clear the screen, retitle the window) and the bidi overrides and isolates (they make a name
 * read other than it is). Refused once here, in the shared schemas, so every name, tag and key is checked alike.
 */
export const WITHOUT_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$/;
export const NO_CONTROL_CHARACTERS = "must not contain control characters";
/** Whether a one-line text holds a control or bidi character (where no schema checks it). */
export const hasControlCharacters = (s: string) => !WITHOUT_CONTROL_CHARACTERS.test(s);

/**
 * A name taken from a document rather than typed (an imported request, a generated draft, a crawled page's title):
 * its line breaks and tabs made spaces, other control and bidi characters left out, so that it is one Name accepts
 * and the document is imported as it is rather than refused.
 */
export function plainName(text: string): string {
  return text
    .replace(/[\t\n\r\v\f]+/g, " ")
    .replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "")
    .replace(/ {2,}/g, " ")
    .trim();
}

/** Checked after trimming: a trailing newline (`$(cat file)`) is trimmed away, not refused. */
export const Name = z.string().trim().min(1).max(200).regex(WITHOUT_CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS);
/** A label an automation carries, to be found and selected by. */
export const Tag = z.string().trim().min(1).max(100).regex(WITHOUT_CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS);
export const Description = z.string().max(100_000);
export const Slug = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and dashes, starting with a letter or digit");

/** A runner label (`eu`, `gpu`, `office-net`): what a runner offers and an environment may require. */
export const RunnerLabel = z
  .string()
  .trim()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "lowercase letters, digits, '.', '_' and '-', starting with a letter or digit");

/** A person's email address, checked the same wherever it is given: the web setup, members, `svc admin`. */
export const Email = z.email().max(320);
/** A password for the web application, checked the same wherever it is set: the web setup, a password-setup link,
 * `svc admin create-user --password-stdin`. */
export const Password = z.string().min(10, "the password needs at least 10 characters").max(1000);

/** The most automations one run of a feature starts (as many as a group holds); more belong in groups. */
export const FEATURE_RUN_MAX = 1000;

/** A variable's name, as environments name them. */
export const VarName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "letters, digits and _, not starting with a digit")
  .max(100);
const MAX_RUN_VARIABLES = 100;
export const RunVariables = z
  .record(VarName, z.string().max(10_000))
  .refine((v) => Object.keys(v).length <= MAX_RUN_VARIABLES, `at most ${MAX_RUN_VARIABLES} variables`)
  .describe("Variables for this run only, overriding the environment's (never a secret's name)");
/** Masking a short value would hide common text and still give the value away by where *** appears. */
export const SECRET_MIN_CHARS = 8;
export const SECRET_TOO_SHORT = `too short to mask safely: a secret needs at least ${SECRET_MIN_CHARS} characters`;
export const SecretValue = z.string().min(SECRET_MIN_CHARS, SECRET_TOO_SHORT).max(10_000);
export const OneRunSecrets = z
  .record(VarName, SecretValue)
  .refine((v) => Object.keys(v).length <= MAX_RUN_VARIABLES, `at most ${MAX_RUN_VARIABLES} secrets`)
  .describe("Secrets for this run only: masked in results like the environment's, and never stored (a restart before the run starts ends it as error)");
/** A metadata key: `commit`, `branch`, `build_url`, `pr` or any other of letters, digits, `_`, `-` and `.`. */
export const MetadataKey = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "letters, digits, _, - and ., starting with a letter, digit or _")
  .max(64);
const MAX_METADATA_KEYS = 30;
export const RunMetadata = z
  .record(MetadataKey, z.string().max(1000))
  .refine((v) => Object.keys(v).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} keys`)
  .describe("Where the run comes from, e.g. commit, branch, build_url, pr (any keys; stored on the runs and the group run, and filterable)");

/** The body of every request that starts runs; `flags` is how the CLI names its fields. */
export const RunRequest = z
  .strictObject({
    environment: z.string().min(1).max(200).optional().describe("Environment name or id"),
    variables: RunVariables.optional(),
    secrets: OneRunSecrets.optional(),
    metadata: RunMetadata.optional(),
  })
  .default({});
export const RUN_FLAGS = { environment: "env", variables: "var", secrets: "secret" };
