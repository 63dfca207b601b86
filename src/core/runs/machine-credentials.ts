// Credentials for the artifacts bucket from the machine, when none are set: on AWS the role a container or an
// instance runs with, as the AWS SDKs find it. First the container's (ECS task roles, EKS Pod Identity:
// AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI, with the token AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE] names),
// else the instance's, through the EC2 instance metadata service (IMDSv2: a session token first, then the role's
// credentials; AWS_EC2_METADATA_SERVICE_ENDPOINT moves it, AWS_EC2_METADATA_DISABLED=true turns it off). They are
// temporary: kept until five minutes before they expire, then asked for again. Member tests never reach these
// addresses (src/security/instance-metadata.ts); the server does, for itself.
import { readFileSync } from "node:fs";

export interface MachineCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Epoch ms; null: they do not expire. */
  expiresAt: number | null;
}

/** The instance metadata service answers from the machine itself: a second is long. */
const ASK_TIMEOUT_MS = 1_000;
/** Asked for again this long before they expire (the SDKs' own margin). */
const REFRESH_BEFORE_MS = 5 * 60_000;
const ECS_HOST = "http://169.254.170.2";
const IMDS_HOST = "http://169.254.169.254";
const IMDS_TOKEN_TTL_S = "21600";

async function ask(url: string, init: RequestInit = {}): Promise<string> {
  const res = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(ASK_TIMEOUT_MS) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered HTTP ${res.status}`);
  return text;
}

function parsed(text: string, from: string): MachineCredentials {
  let body: { AccessKeyId?: unknown; SecretAccessKey?: unknown; Token?: unknown; Expiration?: unknown; Code?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${from} did not answer JSON`);
  }
  if (body.Code !== undefined && body.Code !== "Success") throw new Error(`${from} answered ${String(body.Code)}`);
  if (typeof body.AccessKeyId !== "string" || typeof body.SecretAccessKey !== "string") throw new Error(`${from} answered no AccessKeyId and SecretAccessKey`);
  const expiresAt = typeof body.Expiration === "string" ? Date.parse(body.Expiration) : Number.NaN;
  return {
    accessKeyId: body.AccessKeyId,
    secretAccessKey: body.SecretAccessKey,
    ...(typeof body.Token === "string" ? { sessionToken: body.Token } : {}),
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : null,
  };
}

export class MachineCredentialSource {
  private held: MachineCredentials | null = null;
  private asking: Promise<MachineCredentials> | null = null;

  constructor(private readonly env: Record<string, string | undefined> = process.env) {}

  /** Where the credentials come from, for messages. */
  describe(): string {
    const container = this.containerUrl();
    if (container !== null) return `the container's credentials at ${container}`;
    return `the instance metadata at ${this.imdsHost()}`;
  }

  /** The credentials to sign with now: those held while fresh, else asked for (one question at a time). */
  async current(): Promise<MachineCredentials> {
    const held = this.held;
    if (held !== null && (held.expiresAt === null || held.expiresAt - Date.now() > REFRESH_BEFORE_MS)) return held;
    this.asking ??= this.askNow().finally(() => {
      this.asking = null;
    });
    try {
      this.held = await this.asking;
      return this.held;
    } catch (e) {
      // Credentials not yet expired still sign: a metadata service slow for a moment does not stop the artifacts.
      if (held !== null && held.expiresAt !== null && held.expiresAt > Date.now()) return held;
      throw e;
    }
  }

  private containerUrl(): string | null {
    const full = this.env.AWS_CONTAINER_CREDENTIALS_FULL_URI;
    if (full) return full;
    const relative = this.env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI;
    return relative ? `${ECS_HOST}${relative}` : null;
  }

  private imdsHost(): string {
    return (this.env.AWS_EC2_METADATA_SERVICE_ENDPOINT ?? IMDS_HOST).replace(/\/+$/, "");
  }

  private async askNow(): Promise<MachineCredentials> {
    const container = this.containerUrl();
    if (container !== null) {
      const file = this.env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE;
      const token = file ? readFileSync(file, "utf8").trim() : this.env.AWS_CONTAINER_AUTHORIZATION_TOKEN;
      return parsed(await ask(container, token ? { headers: { authorization: token } } : {}), container);
    }
    if ((this.env.AWS_EC2_METADATA_DISABLED ?? "").toLowerCase() === "true") throw new Error("AWS_EC2_METADATA_DISABLED is true");
    const host = this.imdsHost();
    const session = await ask(`${host}/latest/api/token`, { method: "PUT", headers: { "x-aws-ec2-metadata-token-ttl-seconds": IMDS_TOKEN_TTL_S } });
    const headers = { "x-aws-ec2-metadata-token": session };
    const roles = await ask(`${host}/latest/meta-data/iam/security-credentials/`, { headers });
    const role = roles.split("\n")[0]?.trim();
    if (!role) throw new Error(`${host} names no role: the instance has no instance profile`);
    const url = `${host}/latest/meta-data/iam/security-credentials/${encodeURIComponent(role)}`;
    return parsed(await ask(url, { headers }), url);
  }
}
