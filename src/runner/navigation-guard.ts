// Keeps a browser run on web pages. Chromium opens file:, data:, chrome: … pages when told to (a goto, a popup), and
// a file: page shows the host's files, the data directory included. Every request for a URL that is not http(s)
// is aborted in the browser (Playwright's route sees file: requests, also those of frames and popups), and a frame
// or popup that shows any other page anyway is blanked; the step then fails saying what was blocked.
import type { Browser, BrowserContext, ConsoleMessage, Frame, Page } from "playwright-core";
import { NOT_WEB } from "../manifest/browser-urls";

const NETWORK_SCHEMES = new Set(["http:", "https:", "data:", "blob:"]);

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
  /** The run's own page; any other page of the context is a popup. */
  mainPage: Page | null = null;

  constructor(private readonly context: BrowserContext) {}

  /** The URLs blocked since the last call, oldest first. */
  takeBlocked(): string[] {
    const b = this.blocked;
    this.blocked = [];
    return b;
  }

  note(url: string): void {
    if (this.blocked.length < 20) this.blocked.push(url.slice(0, 300));
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
    this.context.on("page", (page) => this.watch(page));
    for (const page of this.context.pages()) this.watch(page);
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
    if (frameUrlAllowed(url)) return;
    this.note(url);
    // A popup is closed; the run's own page (and any frame) is sent to a blank page.
    if (page !== this.mainPage) void page.close().catch(() => undefined);
    else void frame.goto("about:blank").catch(() => undefined);
  }
}

const guards = new WeakMap<Page, NavigationGuard>();

/** A fresh context for one run attempt, guarded, with its page. */
export async function openGuardedPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  try {
    const guard = new NavigationGuard(context);
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
