// Where an operation is sent: its manifest path with the path parameters filled in, and its query string.
import type { Operation } from "../manifest/define";
import { ClientError } from "./errors";
import { splitInput } from "./schema-fields";

/** The path below the API prefix, with the query, for one flat input (path parameters are encoded; unset query fields are left out). */
export function operationPath(op: Operation, input: Record<string, unknown>): string {
  const { params, query } = splitInput(op, input);
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined || v === "") throw new ClientError(0, "invalid_request", `${name} is required`);
    return encodeURIComponent(v);
  });
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    // Lists repeat their key (?tag=a&tag=b); maps spread into dotted keys (?metadata.branch=main).
    if (Array.isArray(v)) for (const item of v) qs.append(k, String(item));
    else if (typeof v === "object") for (const [mk, mv] of Object.entries(v)) qs.append(`${k}.${mk}`, String(mv));
    else qs.set(k, String(v));
  }
  const q = qs.toString();
  return `${path}${q ? `?${q}` : ""}`;
}
