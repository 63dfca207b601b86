import { expect, test } from "bun:test";
import { checkNotMetadata } from "../runner/http-fetch";
import { StepFailure } from "../runner/step-result";
import { goesThroughProxy, isMetadataAddress, metadataProblem, namesMetadataAddress, resolvedMetadataAddress } from "./instance-metadata";

test("the instance metadata's addresses and the link-local ranges are refused, in every spelling", () => {
  for (const a of [
    "169.254.169.254",
    "169.254.170.2",
    "169.254.0.1",
    "100.100.100.200",
    "fd00:ec2::254",
    "FD00:EC2:0:0:0:0:0:254",
    "fe80::1",
    "febf::1",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "::a9fe:a9fe",
  ])
    expect({ a, blocked: isMetadataAddress(a) }).toEqual({ a, blocked: true });
  for (const a of [
    "127.0.0.1",
    "10.0.0.1",
    "192.168.1.1",
    "169.253.255.255",
    "169.255.0.1",
    "100.100.100.201",
    "::1",
    "fec0::1",
    "fd00:ec2::253",
    "::ffff:127.0.0.1",
    "2001:db8::1",
    "not an address",
  ])
    expect({ a, blocked: isMetadataAddress(a) }).toEqual({ a, blocked: false });
});

test("a URL's host is read as the URL parser writes it: decimal, hex and bracketed forms come out as the address", () => {
  for (const url of [
    "http://169.254.169.254/",
    "http://2852039166/",
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::169.254.169.254]/",
    "http://169.254.43518/",
    "http://169.254.169.254./",
    "http://[fd00:ec2::254]/",
  ])
    expect({ url, blocked: namesMetadataAddress(new URL(url).hostname) }).toEqual({ url, blocked: true });
  expect(namesMetadataAddress(new URL("http://metadata.google.internal/").hostname)).toBe(false); // a name: resolved, not read
});

test("a hop to an address answers at once: refused with the step's message, or nothing to wait for", () => {
  expect(checkNotMetadata(new URL("http://127.0.0.1:8080/x"), 0)).toBeNull();
  expect(() => checkNotMetadata(new URL("http://169.254.169.254/latest/meta-data/"), 0)).toThrow(
    new StepFailure(
      "error",
      "svc will not request http://169.254.169.254/latest/meta-data/: 169.254.169.254 is in the cloud's instance metadata range (link-local), which hands out the credentials of the machine svc runs on",
    ),
  );
  expect(() => checkNotMetadata(new URL("http://[fd00:ec2::254]/"), 2)).toThrow(
    /^the response redirected to http:\/\/\[fd00:ec2::254\]\/, which svc will not follow: fd00:ec2::254 is in/,
  );
});

test("a host name is resolved, and one that resolves elsewhere (or not at all) may be requested", async () => {
  expect(await metadataProblem(new URL("http://localhost:1/"))).toBeNull();
  expect(await metadataProblem(new URL("http://no-such-host.invalid/"))).toBeNull();
  await checkNotMetadata(new URL("http://localhost/"), 0);
  // What the resolver answers is what is checked (a numeric name resolves to itself: no DNS needed to show it).
  expect(await resolvedMetadataAddress("169.254.169.254")).toBe("169.254.169.254");
  expect(await resolvedMetadataAddress("localhost")).toBeNull();
});

test("through a proxy the proxy resolves names, so none is looked up here; NO_PROXY's hosts and domains still are", () => {
  expect(goesThroughProxy("api.example.com", {})).toBe(false);
  const env = { HTTPS_PROXY: "http://proxy.corp:3128", NO_PROXY: "localhost, .internal,metadata.google.internal:80,10.0.0.1" };
  expect(goesThroughProxy("api.example.com", env)).toBe(true);
  for (const host of ["localhost", "metadata.google.internal", "db.corp.internal", "10.0.0.1"])
    expect({ host, proxied: goesThroughProxy(host, env) }).toEqual({ host, proxied: false });
  expect(goesThroughProxy("api.example.com", { http_proxy: "http://proxy:1", no_proxy: "*" })).toBe(false);
});
