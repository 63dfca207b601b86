// A real S3-compatible server (s3rver: the S3 REST API with SigV4 requests, objects on disk) on a free port, with
// one bucket, in a process of its own (see s3rver-main.cjs), and a client to look into the bucket as an operator would.
import { join } from "node:path";
import { tempDir } from "./server";

export interface S3Bucket {
  endpoint: string;
  bucket: string;
  /** The `[artifacts.s3]` settings of a server keeping its artifacts in this bucket under `prefix`. */
  settings(prefix?: string): Record<string, string>;
  client: Bun.S3Client;
  stop(): Promise<void>;
}

export async function startS3(bucket = "svc-artifacts"): Promise<S3Bucket> {
  const proc = Bun.spawn(["node", join(import.meta.dir, "s3rver-main.cjs"), tempDir("svc-s3-"), bucket], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("s3rver exited before it listened");
    out += new TextDecoder().decode(value);
  }
  const endpoint = `http://127.0.0.1:${out.trim()}`;
  return {
    endpoint,
    bucket,
    settings: (prefix = "") => ({ bucket, endpoint, access_key_id: "S3RVER", secret_access_key: "S3RVER", prefix }),
    client: new Bun.S3Client({ bucket, endpoint, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" }),
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}
