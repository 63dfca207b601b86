// Which URLs an http step may request: http and https only. Checked when the step is saved, and again by the
// run engine on the final URL and on every redirect, since variables, BASE_URL and redirects decide the rest.
import { schemeOf } from "./browser-urls";

const ALLOWED = ["http:", "https:"];
const ALLOWED_TEXT = "only http and https URLs can be requested";

/**
 * At save: a URL written with a scheme (`file:`, `data:`, `FILE:`) must be http or https. A URL that starts
 * with a placeholder or is relative to BASE_URL is checked at run time.
 */
export function savedUrlProblem(url: string): string | null {
  // Read as the URL parser reads it (tabs and newlines dropped, leading spaces ignored), up to a first `{{…}}`.
  const scheme = schemeOf(url.includes("{{") ? url.slice(0, url.indexOf("{{")) : url);
  if (scheme === null || ALLOWED.includes(scheme)) return null;
  return `"${scheme}" URLs are refused: ${ALLOWED_TEXT} (or a path relative to BASE_URL)`;
}

/** At run time, on an absolute URL: why svc will not request it, or null. */
export function requestUrlProblem(url: URL): string | null {
  if (ALLOWED.includes(url.protocol)) return null;
  return `"${url.protocol}" URLs are refused: ${ALLOWED_TEXT}`;
}
