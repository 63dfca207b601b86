// A server whose TLS certificate this machine refuses: what to tell the person at the CLI or the runner. Retrying
// never helps (the certificate stays what it is), so callers stop and say what to do instead of "retrying".

/** The codes fetch gives when the chain ends in a certificate authority this machine does not trust. */
const UNTRUSTED = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
]);
const OUT_OF_DATE = new Set(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"]);
const OTHER_NAME = new Set(["ERR_TLS_CERT_ALTNAME_INVALID", "HOSTNAME_MISMATCH"]);

/**
 * For an error fetch threw reaching `server` (an origin, https://…): a sentence saying why its certificate was
 * refused and what fixes it; null for any other error. Verification is never offered as something to turn off.
 */
export function certificateProblem(e: unknown, server: string): string | null {
  const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "";
  const reason = e instanceof Error ? e.message : String(e);
  if (UNTRUSTED.has(code)) {
    return `${server} presents a TLS certificate this machine does not trust (${reason}): if it comes from your own certificate authority, give that authority's certificate (PEM) in NODE_EXTRA_CA_CERTS, e.g. NODE_EXTRA_CA_CERTS=/etc/ssl/certs/my-ca.pem`;
  }
  if (OUT_OF_DATE.has(code)) {
    return `${server} presents a TLS certificate that is not valid now (${reason}): the server's operator must renew it, or this machine's clock is wrong`;
  }
  if (OTHER_NAME.has(code)) {
    let host = server;
    try {
      host = new URL(server).hostname;
    } catch {
      // the address as given
    }
    return `${server} presents a TLS certificate that is not issued for ${host}: use the name the certificate names (the server's base_url)`;
  }
  return null;
}
