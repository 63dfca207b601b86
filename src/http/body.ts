// Reads a request body without ever holding more than the limit (a declared Content-Length over it is refused
// before reading, a streamed body cut off as soon as it passes it), and parses JSON no deeper than validation can go.
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

/** How deep a JSON body may nest: far beyond any real request, and well within what validation can recurse. */
export const MAX_JSON_DEPTH = 64;

/** True when the JSON text opens more than `max` arrays or objects inside each other (one pass, no parsing). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; response: Response };

/** Parses a JSON request body; one nested too deep for validation to walk is refused before it is parsed. */
export function parseJsonBody(text: string): JsonBody {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
    return {
      ok: false,
      response: errorResponse("invalid_request", `the request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`, {
        details: [{ path: "body", message: `nested deeper than ${MAX_JSON_DEPTH} levels` }],
      }),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, response: errorResponse("invalid_request", `the request body is not valid JSON: ${(e as Error).message}`) };
  }
  // Only a \uD800–\uDFFF escape can make a string that is not Unicode text (a half of a surrogate pair, alone):
  // stored, it comes back as U+FFFD, so the record read differs from the one answered.
  const malformed = /\\u[dD][89a-fA-F]/.test(text) ? malformedTextAt(value, "body") : null;
  if (malformed !== null) {
    return {
      ok: false,
      response: errorResponse("invalid_request", `${malformed}: not Unicode text (half of a surrogate pair, alone)`, {
        details: [{ path: malformed, message: "half of a surrogate pair, alone" }],
      }),
    };
  }
  return { ok: true, value };
}

/** Where in a parsed body a key or a string is not well-formed Unicode, or null. */
function malformedTextAt(value: unknown, path: string): string | null {
  if (typeof value === "string") return value.isWellFormed() ? null : path;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = malformedTextAt(v, `${path}.${i}`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value === null || typeof value !== "object") return null;
  for (const [k, v] of Object.entries(value)) {
    if (!k.isWellFormed()) return `${path}.${k.toWellFormed()}`;
    const found = malformedTextAt(v, `${path}.${k}`);
    if (found !== null) return found;
  }
  return null;
}
