// Random, prefixed, URL-safe identifiers for every record (prj_…, aut_…, run_…).
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export type IdPrefix =
  | "wsp"
  | "usr"
  | "key"
  | "prj"
  | "env"
  | "fea"
  | "gen"
  | "aut"
  | "grp"
  | "run"
  | "grn"
  | "ses"
  | "req"
  | "inv"
  | "rnr"
  | "sch"
  | "ach"
  | "dlv"
  | "asst"
  | "act"
  | "tst";

/** `count` base62 characters from the CSPRNG, without modulo bias. */
export function randomBase62(count: number): string {
  let out = "";
  while (out.length < count) {
    const bytes = crypto.getRandomValues(new Uint8Array(count * 2));
    for (const b of bytes) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === count) break;
    }
  }
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}

export { BASE62 };
