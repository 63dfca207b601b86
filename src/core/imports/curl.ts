// A cURL command line read into one http request: the flags browsers' "copy as cURL" and people write.
import type { HttpStep } from "../../manifest/automation-format";

/** Splits a command line as a POSIX shell would (quotes, backslashes, line continuations); no expansion. */
export function shellWords(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let has = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    // A line continuation, also as Windows writes it (\ then CR LF).
    if (c === "\\" && (line[i + 1] === "\n" || (line[i + 1] === "\r" && line[i + 2] === "\n"))) {
      i += line[i + 1] === "\r" ? 2 : 1;
      continue;
    }
    if (/\s/.test(c)) {
      if (has) out.push(cur);
      cur = "";
      has = false;
      continue;
    }
    has = true;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error("an unclosed ' quote");
      cur += line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && /["\\$`\n]/.test(line[j + 1] ?? "")) j++;
        cur += line[j];
      }
      if (j >= line.length) throw new Error('an unclosed " quote');
      i = j;
    } else if (c === "$" && line[i + 1] === "'") {
      const quoted = ansiC(line, i + 2);
      cur += quoted.text;
      i = quoted.end;
    } else if (c === "\\") {
      cur += line[i + 1] ?? "";
      i++;
    } else cur += c;
  }
  if (has) out.push(cur);
  return out;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/**
 * Bash's ANSI-C quoting (`$'…'`, as Chrome's "Copy as cURL (bash)" writes a body with quotes or newlines in it), from
 * just after `$'`: the text and the index of the closing quote. `\xHH` and octal escapes are bytes (read as UTF-8
 * together), `\uHHHH` and `\UHHHHHHHH` characters.
 */
function ansiC(line: string, start: number): { text: string; end: number } {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  const add = (text: string) => bytes.push(...encoder.encode(text));
  for (let i = start; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'") return { text: new TextDecoder().decode(new Uint8Array(bytes)), end: i };
    if (c !== "\\") {
      add(c);
      continue;
    }
    const e = line[i + 1] ?? "";
    const digits = (re: RegExp, max: number) => {
      let k = 0;
      while (k < max && re.test(line[i + 2 + k] ?? "")) k++;
      return line.slice(i + 2, i + 2 + k);
    };
    if (SIMPLE_ESCAPES[e] !== undefined) {
      add(SIMPLE_ESCAPES[e]);
      i++;
    } else if (e === "x" && digits(/[0-9a-fA-F]/, 2)) {
      const h = digits(/[0-9a-fA-F]/, 2);
      bytes.push(Number.parseInt(h, 16));
      i += 1 + h.length;
    } else if ((e === "u" || e === "U") && digits(/[0-9a-fA-F]/, e === "u" ? 4 : 8)) {
      const h = digits(/[0-9a-fA-F]/, e === "u" ? 4 : 8);
      const code = Number.parseInt(h, 16);
      add(code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd");
      i += 1 + h.length;
    } else if (/[0-7]/.test(e)) {
      let k = 1;
      while (k < 3 && /[0-7]/.test(line[i + 1 + k] ?? "")) k++;
      bytes.push(Number.parseInt(line.slice(i + 1, i + 1 + k), 8) & 0xff);
      i += k;
    } else if (e === "c" && line[i + 2] !== undefined) {
      bytes.push((line[i + 2] as string).charCodeAt(0) & 0x1f);
      i += 2;
    } else {
      // An unknown escape stays as written, as bash keeps it.
      add(`\\${e}`);
      i++;
    }
  }
  throw new Error("an unclosed $' quote");
}

const IGNORED = new Set([
  "-s",
  "--silent",
  "-S",
  "--show-error",
  "-v",
  "--verbose",
  "-i",
  "--include",
  "--compressed",
  "-k",
  "--insecure",
  "-L",
  "--location",
  "-g",
  "--globoff",
]);
const VALUE_FLAGS_IGNORED = new Set([
  "-o",
  "--output",
  "-w",
  "--write-out",
  "-m",
  "--max-time",
  "--connect-timeout",
  "--max-redirs",
  "--retry",
  "--retry-delay",
  "--retry-max-time",
  "--limit-rate",
  "-x",
  "--proxy",
  "--cacert",
  "--capath",
  "-E",
  "--cert",
  "--key",
  "--resolve",
  "--connect-to",
  "--interface",
  "-c",
  "--cookie-jar",
  "-D",
  "--dump-header",
  "--trace",
  "--trace-ascii",
  "--stderr",
  "-r",
  "--range",
  "-T",
  "--upload-file",
]);

/** `--data-urlencode`'s forms: `content`, `=content`, `name=content` (encoded), `@file` / `name@file` (read from a file). */
function urlEncodedData(d: string): string | null {
  const eq = d.indexOf("=");
  const at = d.indexOf("@");
  if (at >= 0 && (eq < 0 || at < eq)) return null;
  if (eq < 0) return encodeURIComponent(d);
  return `${d.slice(0, eq)}${eq > 0 ? "=" : ""}${encodeURIComponent(d.slice(eq + 1))}`.replace(/^=/, "");
}

export interface CurlRequest {
  request: HttpStep["request"];
  warnings: string[];
}

/** Short options without a value, which curl lets stand together (`-sSL`). */
const SHORT_FLAGS = new Set(["s", "S", "v", "i", "k", "L", "g", "G", "I"]);
/** Short options with a value, which curl also reads attached (`-XPUT`, `-HName:value`, `-dbody`, `-sXPOST`). */
const SHORT_WITH_VALUE = new Set(["X", "H", "d", "u", "A", "e", "b", "F", "o", "w", "m", "x", "E", "c", "D", "r", "T"]);

/** `-sXPUT` as curl reads it: `-s -X PUT`; a word that is not such a cluster stays as it is. */
function splitShortOptions(word: string): string[] {
  if (!/^-[A-Za-z]{2}/.test(word)) return [word];
  const out: string[] = [];
  for (let k = 1; k < word.length; k++) {
    const c = word[k] as string;
    if (SHORT_WITH_VALUE.has(c)) {
      out.push(`-${c}`);
      if (k + 1 < word.length) out.push(word.slice(k + 1));
      return out;
    }
    if (!SHORT_FLAGS.has(c)) return [word];
    out.push(`-${c}`);
  }
  return out;
}

export function parseCurl(command: string): CurlRequest {
  const words = shellWords(command.trim()).flatMap(splitShortOptions);
  if (words[0] === "curl") words.shift();
  const warnings: string[] = [];
  let method: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  const data: string[] = [];
  let json = false;
  let get = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    const value = () => {
      const v = words[++i];
      if (v === undefined) throw new Error(`${w} needs a value`);
      return v;
    };
    if (w === "-X" || w === "--request") method = value().toUpperCase();
    else if (w === "-H" || w === "--header") {
      const h = value();
      const colon = h.indexOf(":");
      if (colon <= 0) warnings.push(`the header "${h}" has no name: value form and was left out`);
      else headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
    } else if (w === "-d" || w === "--data" || w === "--data-raw" || w === "--data-binary" || w === "--data-ascii") {
      const d = value();
      if (d.startsWith("@") && w !== "--data-raw") warnings.push(`the body read from the file ${d.slice(1)} was left out`);
      else data.push(d);
    } else if (w === "--data-urlencode") {
      const d = value();
      const encoded = urlEncodedData(d);
      if (encoded === null) warnings.push(`the --data-urlencode value read from a file (${d}) was left out`);
      else data.push(encoded);
    } else if (w === "-G" || w === "--get") get = true;
    else if (w === "-F" || w === "--form" || w === "--form-string") {
      // A POST, as curl makes it; its multipart body has no counterpart.
      method ??= "POST";
      warnings.push(`the multipart form field ${value()} (${w}) is not imported: svc steps send JSON, text or form-encoded bodies`);
    } else if (w === "--json") {
      data.push(value());
      json = true;
    } else if (w === "-u" || w === "--user") headers.Authorization = `Basic ${Buffer.from(value()).toString("base64")}`;
    else if (w === "-A" || w === "--user-agent") headers["User-Agent"] = value();
    else if (w === "-e" || w === "--referer") headers.Referer = value();
    else if (w === "-b" || w === "--cookie") headers.Cookie = value();
    else if (w === "-I" || w === "--head") method = "HEAD";
    else if (w === "--url") url = value();
    else if (IGNORED.has(w)) continue;
    else if (VALUE_FLAGS_IGNORED.has(w)) warnings.push(`${w} ${value()} has no counterpart and was left out`);
    else if (w.startsWith("-")) {
      // An option of its own value (`--foo 3`): the value is not taken for the URL.
      const next = words[i + 1];
      const takesValue = w.startsWith("--") && next !== undefined && !next.startsWith("-") && !/[./:]/.test(next);
      warnings.push(`the option ${w}${takesValue ? ` ${words[++i]}` : ""} is not understood and was left out`);
    } else if (url === undefined) url = w;
    else warnings.push(`a second URL ${w} was left out`);
  }
  if (!url) throw new Error("the command has no URL");
  if (!/^https?:\/\//i.test(url)) url = `http://${url}`;
  // -G: the data is the query string of a GET.
  if (get && data.length) {
    url = `${url}${url.includes("?") ? "&" : "?"}${data.join("&")}`;
    data.length = 0;
    method ??= "GET";
  }
  const body = data.join("&");
  const request: HttpStep["request"] = { method: (method ?? (data.length ? "POST" : "GET")) as HttpStep["request"]["method"], url };
  const contentType = Object.entries(headers).find(([k]) => k.toLowerCase() === "content-type")?.[1];
  if (json) {
    if (!contentType) headers["Content-Type"] = "application/json";
    if (!Object.keys(headers).some((k) => k.toLowerCase() === "accept")) headers.Accept = "application/json";
  }
  if (data.length) {
    let parsed: unknown;
    const isJson = json || /json/i.test(contentType ?? "");
    if (isJson) {
      try {
        parsed = JSON.parse(body);
      } catch {
        warnings.push("the body is sent as text: it is not valid JSON");
      }
    }
    if (parsed !== undefined) request.json = parsed as HttpStep["request"]["json"];
    else {
      request.body = body;
      if (!contentType) headers["Content-Type"] = "application/x-www-form-urlencoded";
    }
  }
  if (Object.keys(headers).length) request.headers = headers;
  return { request, warnings };
}
