// Fetches the feature's page and the same-origin pages it links to, up to the configured number of pages.
import { NOT_WEB, webUrl } from "../../manifest/browser-urls";
import { metadataProblem } from "../../security/instance-metadata";
import { readAtMost } from "../../streams";
import { GenerationFailure } from "../types";
import { readPageOutline } from "../../reader-thread";
import type { PageOutline } from "./page-outline";

const PAGE_TIMEOUT_MS = 15_000;
/** The generation engine's turn in the reader's thread (it runs one generation at a time), beside the workspaces' applies. */
const CRAWL_TURN = "generation";
/** Read as it arrives, after decompression (a few kilobytes of gzip can inflate to gigabytes), and never past this. */
const MAX_PAGE_BYTES = 5 * 1024 * 1024;

async function fetchHtml(url: string, signal: AbortSignal): Promise<{ html: string; finalUrl: string } | { problem: string }> {
  const metadata = await metadataProblem(new URL(url));
  if (metadata !== null) return { problem: metadata };
  let res: Response;
  try {
    res = await fetch(url, { redirect: "follow", signal: AbortSignal.any([signal, AbortSignal.timeout(PAGE_TIMEOUT_MS)]), headers: { accept: "text/html" } });
  } catch (e) {
    signal.throwIfAborted();
    const err = e as Error;
    if (err.name === "TimeoutError") return { problem: `no answer within ${PAGE_TIMEOUT_MS} ms` };
    // fetch refuses to follow a redirect to file:, data:, …
    if (/UnsupportedRedirectProtocol/.test(err.message)) return { problem: `it redirected to a URL that is not http or https (${NOT_WEB})` };
    return { problem: err.message };
  }
  if (!webUrl(res.url || url)) return { problem: `it ended on ${res.url}, which is not an http or https URL (${NOT_WEB})` };
  // Redirects are followed by fetch: where they led is checked before anything of the answer is read.
  const landed = res.url ? await metadataProblem(new URL(res.url)) : null;
  if (landed !== null) {
    await res.body?.cancel().catch(() => undefined);
    return { problem: `it redirected to ${res.url}: ${landed}` };
  }
  if (!res.ok) return { problem: `it answered HTTP ${res.status}` };
  const type = res.headers.get("content-type") ?? "";
  if (!/html/i.test(type)) return { problem: `it is not an HTML page (content-type ${type || "none"})` };
  const body = await readAtMost(res.body, MAX_PAGE_BYTES);
  if (body === null) return { problem: `the page is larger than ${MAX_PAGE_BYTES / 1024 / 1024} MiB (svc stopped reading it)` };
  return { html: new TextDecoder().decode(body), finalUrl: res.url || url };
}

export interface CrawlResult {
  pages: PageOutline[];
  problems: { url: string; problem: string }[];
}

export async function crawl(
  startUrl: string,
  maxPages: number,
  signal: AbortSignal,
  progress: (done: number, total: number) => Promise<void>,
): Promise<CrawlResult> {
  const first = await fetchHtml(startUrl, signal);
  if ("problem" in first) throw new GenerationFailure(`could not read the feature's page ${startUrl}: ${first.problem}`);
  const start = await readPageOutline(first.html, first.finalUrl, CRAWL_TURN);
  const origin = new URL(first.finalUrl).origin;
  const seen = new Set([first.finalUrl, startUrl]);
  const next = [...new Set(start.links.map((l) => l.url))].filter((u) => new URL(u).origin === origin && !seen.has(u)).slice(0, Math.max(0, maxPages - 1));
  const pages = [start];
  const problems: CrawlResult["problems"] = [];
  await progress(1, next.length + 1);
  for (const [i, url] of next.entries()) {
    signal.throwIfAborted();
    const got = await fetchHtml(url, signal);
    if ("problem" in got) problems.push({ url, problem: got.problem });
    else if (!seen.has(got.finalUrl)) {
      seen.add(got.finalUrl);
      pages.push(await readPageOutline(got.html, got.finalUrl, CRAWL_TURN));
    }
    await progress(i + 2, next.length + 1);
  }
  return { pages, problems };
}
