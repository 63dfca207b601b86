// Per-request facts gathered before routing (id, client IP, rate-limit verdict), keyed by the Request.
import type { BucketVerdict } from "../security/token-bucket";

export interface RequestState {
  id: string;
  ip: string;
  startedAt: number;
  /** The verdict whose headers the response carries: the workspace's once known, else the IP's. */
  rateLimit: BucketVerdict | null;
  /** The manifest operation served, for logs and metrics. */
  operation?: string;
  workspaceId?: string;
  /** The response was built with the request id and rate-limit headers already in it. */
  headersSet?: boolean;
}

const states = new WeakMap<Request, RequestState>();

export const setRequestState = (req: Request, s: RequestState) => states.set(req, s);
export const requestState = (req: Request): RequestState | undefined => states.get(req);
