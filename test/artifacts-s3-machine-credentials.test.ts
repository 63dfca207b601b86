// A bucket configured without keys is signed with the machine's role, as the AWS SDKs find it: the container's
// credentials (ECS, EKS Pod Identity) or the instance's through the EC2 instance metadata service (IMDSv2). Here a
// real S3 server (s3rver) checks the signatures, and a metadata service on a free port hands out its keys.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { type S3Bucket, startS3 } from "./helpers/s3";
import { tempDir } from "./helpers/server";

let s3: S3Bucket;
let metadata: ReturnType<typeof Bun.serve>;
/** What the metadata service hands out, and what it was asked. */
const handed = { id: "S3RVER", secret: "S3RVER", expiresInMs: 3_600_000 };
const asked: string[] = [];
const SESSION = "imds-session-token";
const CONTAINER_TOKEN = "container-authorization-token";
/** Where the machine's keys could come from: cleared for each test (a CI machine may have some), restored after. */
const ENV = [
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "S3_ACCESS_KEY_ID",
  "S3_SECRET_ACCESS_KEY",
  "S3_SESSION_TOKEN",
  "AWS_EC2_METADATA_SERVICE_ENDPOINT",
  "AWS_EC2_METADATA_DISABLED",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
];
const original = Object.fromEntries(ENV.map((name) => [name, process.env[name]]));

const credentials = () =>
  Response.json({
    Code: "Success",
    AccessKeyId: handed.id,
    SecretAccessKey: handed.secret,
    Token: "session-token",
    Expiration: new Date(Date.now() + handed.expiresInMs).toISOString(),
  });

beforeAll(async () => {
  s3 = await startS3();
  metadata = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      asked.push(`${req.method} ${path}`);
      // IMDSv2: a session token first, then only requests that carry it.
      if (req.method === "PUT" && path === "/latest/api/token")
        return req.headers.get("x-aws-ec2-metadata-token-ttl-seconds") ? new Response(SESSION) : new Response(null, { status: 400 });
      if (path.startsWith("/latest/meta-data/") && req.headers.get("x-aws-ec2-metadata-token") !== SESSION) return new Response(null, { status: 401 });
      if (path === "/latest/meta-data/iam/security-credentials/") return new Response("svc-role\n");
      if (path === "/latest/meta-data/iam/security-credentials/svc-role") return credentials();
      if (path === "/container-credentials") return req.headers.get("authorization") === CONTAINER_TOKEN ? credentials() : new Response(null, { status: 401 });
      return new Response(null, { status: 404 });
    },
  });
});
afterAll(async () => {
  await s3.stop();
  metadata.stop(true);
  for (const [name, value] of Object.entries(original)) if (value !== undefined) process.env[name] = value;
});
afterEach(() => {
  for (const name of ENV) delete process.env[name];
  Object.assign(handed, { id: "S3RVER", secret: "S3RVER", expiresInMs: 3_600_000 });
  asked.length = 0;
});

/** A server keeping its artifacts in the bucket, with no keys set: its start writes and deletes a probe object. */
function start(env: Record<string, string>) {
  for (const name of ENV) delete process.env[name];
  Object.assign(process.env, env);
  const config = loadConfig({
    env: {},
    flags: {
      port: 0,
      data_dir: tempDir(),
      log_level: "warn",
      "artifacts.s3.bucket": s3.bucket,
      "artifacts.s3.endpoint": s3.endpoint,
      "artifacts.s3.prefix": "machine/",
    },
  });
  return startServer(config);
}

const metadataUrl = () => `http://127.0.0.1:${metadata.port}`;
const credentialReads = () => asked.filter((a) => a === "GET /latest/meta-data/iam/security-credentials/svc-role").length;

test("the instance's role signs: IMDSv2's session token first, then the role's keys, kept while they are fresh", async () => {
  const server = await start({ AWS_EC2_METADATA_SERVICE_ENDPOINT: metadataUrl() });
  try {
    expect(asked.slice(0, 3)).toEqual([
      "PUT /latest/api/token",
      "GET /latest/meta-data/iam/security-credentials/",
      "GET /latest/meta-data/iam/security-credentials/svc-role",
    ]);
    const objects = server.core.objects;
    if (objects === null) throw new Error("no bucket");
    const key = objects.keyOf("run_machine", "shot.png");
    await objects.put(key, new TextEncoder().encode("signed by the role"));
    expect(await s3.client.file(key).text()).toBe("signed by the role");
    expect(new TextDecoder().decode(await objects.get(key))).toBe("signed by the role");
    await objects.delete(key);
    expect(await s3.client.file(key).exists()).toBe(false);
    expect(credentialReads()).toBe(1);
  } finally {
    await server.stop();
  }
});

test("keys about to expire are asked for again before they are used", async () => {
  handed.expiresInMs = 60_000; // inside the five minutes before expiry
  const server = await start({ AWS_EC2_METADATA_SERVICE_ENDPOINT: metadataUrl() });
  try {
    const objects = server.core.objects;
    if (objects === null) throw new Error("no bucket");
    const before = credentialReads();
    await objects.put(objects.keyOf("run_machine", "again.png"), new TextEncoder().encode("x"));
    await objects.delete(objects.keyOf("run_machine", "again.png"));
    expect(credentialReads()).toBe(before + 2);
  } finally {
    await server.stop();
  }
});

test("the keys the role hands out are the ones signing: keys the bucket does not know stop the start", async () => {
  Object.assign(handed, { id: "NOT-A-KEY", secret: "wrong" });
  const error = await start({ AWS_EC2_METADATA_SERVICE_ENDPOINT: metadataUrl() }).then(
    async (s) => {
      await s.stop();
      return null;
    },
    (e: Error) => e.message,
  );
  expect(error).toContain(`s3://${s3.bucket}/machine/`);
  expect(error).toMatch(/InvalidAccessKeyId|SignatureDoesNotMatch/);
  expect(error).not.toContain("wrong");
});

test("a container's credentials come first, with its authorization token", async () => {
  const server = await start({
    AWS_CONTAINER_CREDENTIALS_FULL_URI: `${metadataUrl()}/container-credentials`,
    AWS_CONTAINER_AUTHORIZATION_TOKEN: CONTAINER_TOKEN,
  });
  try {
    expect(asked).toEqual(["GET /container-credentials"]);
  } finally {
    await server.stop();
  }
});

test("no keys anywhere: the start stops saying where it looked", async () => {
  const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null) });
  const port = closed.port;
  closed.stop(true);
  const error = await start({ AWS_EC2_METADATA_SERVICE_ENDPOINT: `http://127.0.0.1:${port}` }).then(
    async (s) => {
      await s.stop();
      return null;
    },
    (e: Error) => e.message,
  );
  expect(error).toContain(
    `no credentials for s3://${s3.bucket}/machine/ at ${s3.endpoint}: none are set (artifacts.s3.access_key_id and secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), and the instance metadata at http://127.0.0.1:${port} gave none`,
  );
  const disabled = await start({ AWS_EC2_METADATA_SERVICE_ENDPOINT: metadataUrl(), AWS_EC2_METADATA_DISABLED: "true" }).then(
    async (s) => {
      await s.stop();
      return null;
    },
    (e: Error) => e.message,
  );
  expect(disabled).toContain("gave none: AWS_EC2_METADATA_DISABLED is true");
  expect(asked).toEqual([]);
});
