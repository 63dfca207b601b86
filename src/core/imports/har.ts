// A HAR file (what browsers' developer tools save) read as one automation: its requests in order, each a step,
// with a capture wherever a later request reuses a value an earlier response gave.
import type { HttpStep } from "../../manifest/automation-format";
import type { ImportPlan } from "./save";

type Request = HttpStep["request"];
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
/** Headers the client sets itself, or that only describe one connection. */
const DROPPED = new Set(["host", "content-length", "connection", "accept-encoding", "keep-alive", "transfer-encoding", "upgrade", "te"]);

interface HarEntry {
  request?: {
    method?: string;
    url?: string;
    headers?: { name: string; value: string }[];
    postData?: { mimeType?: string; text?: string; params?: { name: string; value?: string; fileName?: string }[] };
  };
  response?: { status?: number; content?: { mimeType?: string; text?: string; encoding?: string } };
}

/** The longest variable name made of a response's key. */
const MAX_NAME_CHARS = 64;

/** A value worth capturing: long enough (or large enough) not to be reused by chance. */
const distinctive = (v: unknown): v is string | number =>
  (typeof v === "string" && v.length >= 4 && !/^(?:true|false|null)$/.test(v)) || (typeof v === "number" && Number.isInteger(v) && Math.abs(v) >= 100);

/** The longest JSON path a capture takes (Capture in the automation format). */
const MAX_PATH_CHARS = 500;

/**
 * Every distinctive leaf of a JSON value, by JSON path (first path wins), with the key it sits under. A leaf whose
 * path would be longer than a capture takes is not one: below a long key nothing is looked at.
 */
function leaves(value: unknown, path = "$", key = "value", out = new Map<string, { path: string; key: string }>()) {
  if (path.length > MAX_PATH_CHARS) return out;
  if (Array.isArray(value))
    value.forEach((v, i) => {
      leaves(v, `${path}[${i}]`, key, out);
    });
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) leaves(v, /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, k, out);
  else if (distinctive(value) && !out.has(String(value))) out.set(String(value), { path, key });
  return out;
}

export function readHar(doc: unknown, nameOverride?: string): ImportPlan {
  const log = (doc as { log?: { entries?: unknown; pages?: { title?: string }[] } })?.log;
  if (!log || !Array.isArray(log.entries)) throw new Error("not a HAR file (log.entries is required)");
  const entries = log.entries as HarEntry[];
  const name = nameOverride ?? (log.pages?.[0]?.title || "Imported HAR");
  const warnings: ImportPlan["warnings"] = [];
  const steps: HttpStep[] = [];
  /** Values earlier responses gave, by their text: the variable that captures each (made when first reused). */
  const known = new Map<string, { step: number; path: string; key: string; variable?: string }>();
  const variables = new Set<string>();
  /**
   * The suffix to try first for each name: names are only ever added, so the first free one never goes back. Trying
   * from 2 every time made tens of thousands of values under one key cost billions of lookups (a HAR of a megabyte
   * held the server for minutes).
   */
  const nextSuffix = new Map<string, number>();
  const variableFor = (value: string) => {
    const k = known.get(value);
    if (!k) return undefined;
    if (!k.variable) {
      // A name is made of the key the value sat under, cut short: a key can be as long as the file.
      const base =
        k.key
          .slice(0, MAX_NAME_CHARS)
          .replace(/[^A-Za-z0-9_]/g, "_")
          .replace(/^(?=\d)/, "_") || "value";
      let v = base;
      let n = nextSuffix.get(base) ?? 2;
      if (variables.has(v)) {
        for (v = `${base}_${n}`; variables.has(v); n++, v = `${base}_${n}`);
        nextSuffix.set(base, n + 1);
      }
      variables.add(v);
      k.variable = v;
      const step = steps[k.step] as HttpStep;
      // Added in place: copying the captures at each one made a step of many captures quadratic.
      step.capture ??= {};
      step.capture[v] = k.path;
    }
    return `{{${k.variable}}}`;
  };
  const swapText = (text: string) => variableFor(text) ?? text;
  const swapJson = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(swapJson);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swapJson(x)]));
    return distinctive(v) ? (variableFor(String(v)) ?? v) : v;
  };

  entries.forEach((e, i) => {
    const r = e.request;
    const label = `${i + 1}. ${r?.method ?? "?"} ${r?.url ? safePath(r.url) : "?"}`.slice(0, 200);
    const warn = (message: string) => warnings.push({ request: name, message: `${label}: ${message}` });
    if (!r?.url || !/^https?:\/\//i.test(r.url)) {
      warn("it has no http(s) URL and was left out");
      return;
    }
    const method = (r.method ?? "GET").toUpperCase();
    if (!METHODS.has(method)) {
      warn(`the method ${method} is not supported and the request was left out`);
      return;
    }
    const url = new URL(r.url);
    url.pathname = url.pathname
      .split("/")
      .map((seg) => {
        const text = decodeURIComponent(seg);
        const v = seg && variableFor(text);
        return v ?? seg;
      })
      .join("/");
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = swapText(v);
    url.search = "";
    const request: Request = {
      method: method as Request["method"],
      url: url
        .toString()
        .replace(/%7B%7B/g, "{{")
        .replace(/%7D%7D/g, "}}"),
    };
    if (Object.keys(query).length) request.query = query;
    const headers: Record<string, string> = {};
    for (const h of r.headers ?? []) {
      if (h.name.startsWith(":") || DROPPED.has(h.name.toLowerCase())) continue;
      const bearer = /^(Bearer|Token)\s+(.+)$/i.exec(h.value);
      headers[h.name] = bearer ? `${bearer[1]} ${swapText(bearer[2] as string)}` : swapText(h.value);
    }
    const post = r.postData;
    if (post?.text !== undefined && post.text !== "") {
      let json: unknown;
      if (/json/i.test(post.mimeType ?? "")) {
        try {
          json = JSON.parse(post.text);
        } catch {
          warn("the body is sent as text: it is not valid JSON");
        }
      }
      if (json !== undefined) request.json = swapJson(json) as Request["json"];
      else request.body = post.text;
    } else if (post?.params?.length) {
      if (post.params.some((p) => p.fileName)) warn("a file in its form was left out");
      const form = new URLSearchParams();
      for (const p of post.params) if (!p.fileName) form.append(p.name, swapText(p.value ?? ""));
      request.body = form.toString();
      if (!Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) headers["Content-Type"] = "application/x-www-form-urlencoded";
    }
    const status = e.response?.status;
    // A HAR records each hop as an entry of its own: a recorded redirect is checked as the redirect, not followed
    // (its target is the next entry).
    if (status !== undefined && status >= 300 && status < 400) request.follow_redirects = false;
    if (Object.keys(headers).length) request.headers = headers;
    const step: HttpStep = { name: label, request, expect: [status && status >= 100 && status <= 599 ? { status } : { status: { lt: 400 } }] };
    steps.push(step);
    // What this response gave, for later requests to reuse.
    const content = e.response?.content;
    if (content?.text && /json/i.test(content.mimeType ?? "")) {
      try {
        const text = content.encoding === "base64" ? Buffer.from(content.text, "base64").toString("utf8") : content.text;
        for (const [value, at] of leaves(JSON.parse(text))) if (!known.has(value)) known.set(value, { step: steps.length - 1, ...at });
      } catch {
        // not JSON after all: nothing to capture
      }
    }
  });
  return { automations: steps.length ? [{ ref: "0", name, description: "Imported from a HAR file", steps }] : [], warnings };
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.slice(0, 100);
  }
}
