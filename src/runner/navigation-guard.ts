// Keeps a browser run on web pages. Chromium opens file:, data:, chrome: … pages when told to (a goto, a popup), and
// a file: page shows the host's files, the data directory included. Every request for a URL that is not http(s)
// is aborted in the browser (Playwright's route sees file: requests, also those of frames and popups), and a frame
// or popup that shows any other page anyway is blanked; the step then fails saying what was blocked.
import type { Browser, BrowserContext, ConsoleMessage, Frame, Page, Request, Route } from "playwright-core";
import { NOT_WEB } from "../manifest/browser-urls";
import { metadataProblemText, namesMetadataAddress } from "../security/instance-metadata";
import { type SecretHosts, secretRefusal } from "./secret-hosts";
import { cutText } from "./secret-masking";

const NETWORK_SCHEMES = new Set(["http:", "https:", "data:", "blob:"]);
/** Redirects followed for a request that carries a secret (as many as Chromium follows). */
const MAX_REDIRECTS = 20;

/** What a frame may show: web pages, blank and srcdoc frames, blobs the page made, and Chromium's error page. */
function frameUrlAllowed(url: string): boolean {
  if (url === "" || url === "about:blank" || url === "about:srcdoc" || url === "chrome-error://chromewebdata/") return true;
  const lower = url.slice(0, 12).toLowerCase();
  if (lower.startsWith("http:") || lower.startsWith("https:")) return true;
  // A blob made by a web page carries that page's origin (blob:https://site/uuid).
  return lower.startsWith("blob:http:") || lower.startsWith("blob:https:");
}

/** Chromium's words when it refuses a page's own attempt to open a local or data URL. */
const REFUSED = /^Not allowed to (?:load local resource|navigate top frame to [a-z-]+ URL): (\S+)/i;

export class NavigationGuard {
  private blocked: string[] = [];
  /** The page's requests to the instance metadata stopped since the last call. */
  private metadata: string[] = [];
  /** Why requests carrying a secret to a host not allowed were aborted, since the last call. */
  private refused: string[] = [];
  /** The run's own page; any other page of the context is a popup. */
  mainPage: Page | null = null;

  constructor(
    private readonly context: BrowserContext,
    private readonly secretHosts: SecretHosts | null = null,
  ) {}

  /** Why the page's requests that would have carried a secret elsewhere were stopped, since the last call. */
  takeRefused(): string[] {
    const r = this.refused;
    this.refused = [];
    return r;
  }

  /** The page's requests to the instance metadata that were stopped, since the last call. */
  takeMetadata(): string[] {
    const m = this.metadata;
    this.metadata = [];
    return m;
  }

  /** The URLs blocked since the last call, oldest first. */
  takeBlocked(): string[] {
    const b = this.blocked;
    this.blocked = [];
    return b;
  }

  note(url: string): void {
    if (this.blocked.length < 20) this.blocked.push(cutText(url, 300));
  }

  async install(): Promise<void> {
    await this.context.route(
      (url) => !NETWORK_SCHEMES.has(url.protocol),
      (route) => {
        const request = route.request();
        if (request.isNavigationRequest()) this.note(request.url());
        return route.abort("blockedbyclient").catch(() => undefined);
      },
    );
    // Nor does a page reach the cloud's instance metadata at its address, whether a redirect, a frame or a
    // script asks (a goto is checked before, host names included: instance-metadata.ts).
    await this.context.route(
      (url) => namesMetadataAddress(url.hostname),
      (route) => {
        const url = route.request().url();
        if (this.metadata.length < 20) this.metadata.push(cutText(url, 300));
        return route.abort("blockedbyclient").catch(() => undefined);
      },
    );
    // A protected environment's secrets go only to its allowed hosts, whatever the page does: a redirect, a form
    // sent elsewhere, a script's fetch. Only requests that carry a secret are held up. A handler that throws would
    // end the worker process (an unhandled rejection) with every run on it: whatever goes wrong fails the request.
    const hosts = this.secretHosts;
    if (hosts) {
      await this.context.route(
        (url) => url.protocol === "http:" || url.protocol === "https:",
        async (route) => {
          try {
            const request = route.request();
            const headers = await request.allHeaders();
            const parts = [...requestParts(request), ...Object.entries(headers).flat()];
            if (!parts.some((p) => hosts.find(p) !== null)) return await route.fallback();
            const why = secretRefusal(hosts, request.url(), parts);
            if (why !== null) return await this.refuse(route, why);
            // Cookies are the first host's: the next hop of a redirect to another host does not carry them.
            const { cookie: _cookie, ...hopHeaders } = headers;
            return await this.followRedirects(route, hosts, Object.entries(hopHeaders).flat());
          } catch {
            await route.abort("failed").catch(() => undefined);
          }
        },
      );
    }
    this.context.on("page", (page) => this.watch(page));
    for (const page of this.context.pages()) this.watch(page);
  }

  private refuse(route: Route, why: string): Promise<void> {
    if (this.refused.length < 20) this.refused.push(why);
    return route.abort("blockedbyclient").catch(() => undefined);
  }

  /**
   * A request that carries a secret to an allowed host: Chromium follows its redirects without showing them to
   * routes, so they are followed here, each hop checked before it is sent (an open redirect on the allowed host must
   * not carry the secret elsewhere). The page gets the first answer that is not a redirect; after hops that still
   * carried the secret it shows under the first URL, as the browser never saw them.
   */
  private async followRedirects(route: Route, hosts: SecretHosts, headers: string[]): Promise<void> {
    const request = route.request();
    let url = request.url();
    let method = request.method();
    let body = request.postDataBuffer() ?? undefined;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const response = await route.fetch({ url, method, ...(body !== undefined ? { postData: body } : {}), maxRedirects: 0 });
      const location = response.headers().location;
      if (response.status() < 300 || response.status() > 399 || !location) return route.fulfill({ response });
      const next = new URL(location, url).href;
      // 307 and 308 send the body again; the others go on as a GET without one.
      if (response.status() !== 307 && response.status() !== 308) {
        method = "GET";
        body = undefined;
      }
      const carried = [next, ...headers, ...(body !== undefined ? [body.toString("latin1")] : [])];
      const why = secretRefusal(hosts, next, carried);
      if (why !== null) return this.refuse(route, why);
      // No secret goes on: the browser follows the redirect itself, and the page shows where it leads.
      if (!carried.some((p) => hosts.find(p) !== null)) return route.fulfill({ response });
      url = next;
    }
    return this.refuse(route, `more than ${MAX_REDIRECTS} redirects carrying a secret of the protected environment "${hosts.environment}"`);
  }

  private watch(page: Page): void {
    page.on("framenavigated", (frame) => this.checkFrame(page, frame));
    page.on("console", (m: ConsoleMessage) => {
      const refused = REFUSED.exec(m.text());
      if (refused) this.note(refused[1] as string);
    });
    if (!frameUrlAllowed(page.url())) this.checkFrame(page, page.mainFrame());
  }

  private checkFrame(page: Page, frame: Frame): void {
    const url = frame.url();
    if (frameUrlAllowed(url)) {
      // A redirect to the instance metadata is not shown to routes: the frame that shows it is blanked instead.
      if (!showsMetadata(url)) return;
      if (this.metadata.length < 20) this.metadata.push(cutText(url, 300));
    } else this.note(url);
    // A popup is closed; the run's own page (and any frame) is sent to a blank page.
    if (page !== this.mainPage) void page.close().catch(() => undefined);
    else void frame.goto("about:blank").catch(() => undefined);
  }
}

function showsMetadata(url: string): boolean {
  try {
    return namesMetadataAddress(new URL(url).hostname);
  } catch {
    return false;
  }
}

const guards = new WeakMap<Page, NavigationGuard>();

/** What a request carries that may hold a secret, besides its headers (read apart: with its cookies): its URL and body. */
function requestParts(request: Request): string[] {
  const parts = [request.url()];
  try {
    const body = request.postData();
    if (body) parts.push(body);
  } catch {
    // A body that is not text (a file upload): its bytes as latin1 still show a secret typed into it.
    const bytes = request.postDataBuffer();
    if (bytes) parts.push(bytes.toString("latin1"));
  }
  return parts;
}

/** A fresh context for one run attempt, guarded (for a protected environment, also its secrets), with its page. */
export async function openGuardedPage(browser: Browser, secretHosts: SecretHosts | null = null): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  try {
    const guard = new NavigationGuard(context, secretHosts);
    await guard.install();
    const page = await context.newPage();
    guard.mainPage = page;
    guards.set(page, guard);
    return { context, page };
  } catch (e) {
    await context.close().catch(() => undefined);
    throw e;
  }
}

export function guardOf(page: Page): NavigationGuard | undefined {
  return guards.get(page);
}

/** The step's message when the page was kept from opening a URL. */
export function blockedMessage(urls: string[]): string {
  const first = urls[0] ?? "";
  const more = urls.length > 1 ? ` (and ${urls.length - 1} more)` : "";
  return `the page tried to open ${first}${more}, which was blocked: ${NOT_WEB}`;
}

/** The step's message when the page's requests to the instance metadata were stopped. */
export function metadataMessage(urls: string[]): string {
  const first = urls[0] ?? "";
  const more = urls.length > 1 ? ` (and ${urls.length - 1} more)` : "";
  let host = first;
  try {
    host = new URL(first).hostname.replace(/^\[|\]$/g, "");
  } catch {}
  return `the page tried to reach ${first}${more}, which was blocked: ${metadataProblemText(host)}`;
}
