// The URLs browser steps may name: pages to open (http and https only) and expected page URLs (exact or a path).
// Browser steps run on the server that holds every workspace's data: file:, data:, chrome:, view-source: and the
// like would show the host to a member, so only web pages are ever opened.

const WEB_SCHEMES = new Set(["http:", "https:"]);

/** What the URL parser drops before reading a scheme: leading/trailing C0 controls and spaces, tabs and newlines. */
const normalize = (s: string) => s.replace(/[\t\n\r]/g, "").replace(/^[\u0000-\u0020]+/, "");

/** The scheme a URL-like text starts with (lower case, with its colon), or null for a relative URL. */
export function schemeOf(text: string): string | null {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(normalize(text));
  return m ? `${(m[1] as string).toLowerCase()}:` : null;
}

export const NOT_WEB = "browser steps open only http and https pages";

/**
 * Why a page URL (`goto`, a feature's page) cannot be opened, or null. Relative URLs are fine (they are joined to
 * BASE_URL); a `{{…}}` part is checked after interpolation at run time, only a scheme written before it now.
 */
export function pageUrlProblem(url: string): string | null {
  const head = url.includes("{{") ? url.slice(0, url.indexOf("{{")) : url;
  const scheme = schemeOf(head);
  if (scheme === null) {
    // "{{X}}:…" or "fi{{X}}le:…" could still become a scheme: decided at run time.
    return null;
  }
  if (!WEB_SCHEMES.has(scheme)) return `${JSON.stringify(url.slice(0, 100))} is a ${scheme} URL: ${NOT_WEB}`;
  return null;
}

/** An absolute http(s) URL, as the URL parser reads it; null when it is not one. */
export function webUrl(text: string): URL | null {
  try {
    const u = new URL(text);
    return WEB_SCHEMES.has(u.protocol) ? u : null;
  } catch {
    return null;
  }
}

/**
 * Why an expected page URL (`expect.url`, `wait_for.url` as a string) cannot be compared, or null: it is an
 * absolute http(s) URL, or a path starting with a single `/` (with `?query` and `#fragment` if wanted).
 */
export function expectedUrlProblem(expected: string): string | null {
  if (expected.includes("{{")) return null;
  if (schemeOf(expected) !== null) {
    return webUrl(expected)
      ? null
      : `${JSON.stringify(expected.slice(0, 100))} is not an http or https URL: give an exact URL (https://…), a path (/dashboard) or {"matches": "regular expression"}`;
  }
  if (!expected.startsWith("/") || expected.startsWith("//")) {
    return `${JSON.stringify(expected.slice(0, 100))} is neither an exact URL nor a path: give https://…, a path starting with / (/dashboard), or {"matches": "regular expression"}`;
  }
  return null;
}

/**
 * Whether the page's URL is the expected one. An absolute URL must be the same URL; a path is compared with the
 * page's path, and with its query when it has `?`, and with its fragment when it has `#`.
 */
export function urlIsExpected(actual: string, expected: string): boolean {
  let a: URL;
  let e: URL;
  try {
    a = new URL(actual);
    e = new URL(expected, a);
  } catch {
    return false;
  }
  if (schemeOf(expected) !== null) return a.href === e.href;
  const hashAt = expected.indexOf("#");
  const beforeHash = hashAt < 0 ? expected : expected.slice(0, hashAt);
  if (e.pathname !== a.pathname) return false;
  if (beforeHash.includes("?") && e.search !== a.search) return false;
  if (hashAt >= 0 && e.hash !== a.hash) return false;
  return true;
}
