// Reads a request body without ever holding more than the limit: a declared Content-Length over it is refused
// before reading, and a streamed (chunked) body is cut off as soon as it passes it.
import { readAtMost } from "../streams";
import { errorResponse } from "./errors";

export type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; response: Response };

const tooLarge = (maxBytes: number) => ({
  ok: false as const,
  response: errorResponse("payload_too_large", `the request body is larger than ${maxBytes} bytes`),
});

export async function readBodyLimited(request: Request, maxBytes: number): Promise<BodyRead> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge(maxBytes);
  let bytes: Uint8Array | null;
  try {
    bytes = await readAtMost(request.body, maxBytes);
  } catch {
    // The client went away or the body broke off mid-way: nothing usable arrived.
    return { ok: false, response: errorResponse("invalid_request", "the request body could not be read to its end") };
  }
  return bytes === null ? tooLarge(maxBytes) : { ok: true, bytes };
}
