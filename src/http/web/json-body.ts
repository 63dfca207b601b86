// Reads and validates the JSON body of a web route with a zod schema, answering bad input in the error shape.
import type { z } from "zod";
import { zodDetails } from "../../manifest/errors";
import { readBodyLimited } from "../body";
import { errorResponse } from "../errors";

const MAX_BYTES = 64 * 1024;

export async function readJson<S extends z.ZodType>(
  request: Request,
  schema: S,
): Promise<{ ok: true; value: z.output<S> } | { ok: false; response: Response }> {
  if (!/^application\/json\b/i.test(request.headers.get("content-type") ?? "")) {
    return { ok: false, response: errorResponse("unsupported_media_type", "the request body must be JSON (Content-Type: application/json)") };
  }
  const read = await readBodyLimited(request, MAX_BYTES);
  if (!read.ok) return read;
  const text = new TextDecoder().decode(read.bytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, response: errorResponse("invalid_request", "the request body is not valid JSON") };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const details = zodDetails(parsed.error, "body");
    return { ok: false, response: errorResponse("invalid_request", `the request body is not valid: ${details[0]?.message ?? ""}`, { details }) };
  }
  return { ok: true, value: parsed.data };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}
