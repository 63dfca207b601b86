// Which URLs an http step may request: http and https only. Checked when the step is saved, and again by the
// run engine on the final URL and on every redirect, since variables, BASE_URL and redirects decide the rest.

const ALLOWED = ["http:", "https:"];
const SCHEME = /^\s*([A-Za-z][A-Za-z0-9+.-]*):/;
const ALLOWED_TEXT = "only http and https URLs can be requested";

/**
 * At save: a URL written with a scheme (`file:`, `data:`, `FILE:`) must be http or https. A URL that starts
 * with a placeholder or is relative to BASE_URL is checked at run time.
 */
export function savedUrlProblem(url: string): string | null {
  const scheme = SCHEME.exec(url)?.[1];
  if (scheme === undefined || ALLOWED.includes(`${scheme.toLowerCase()}:`)) return null;
  return `"${scheme}:" URLs are refused: ${ALLOWED_TEXT} (or a path relative to BASE_URL)`;
}

/** At run time, on an absolute URL: why svc will not request it, or null. */
export function requestUrlProblem(url: URL): string | null {
  if (ALLOWED.includes(url.protocol)) return null;
  return `"${url.protocol}" URLs are refused: ${ALLOWED_TEXT}`;
}
