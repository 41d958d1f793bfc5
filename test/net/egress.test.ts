/** The host rules shared by cluster servers and webhook receivers (src/net/egress.ts, issue 17). */
import { describe, expect, it } from "vitest";
import { egressRefusal, egressRule, httpsRefusal, parseAllowedHosts } from "../../src/net/egress.ts";
import { isLoopbackHostname } from "../../src/net/loopback.ts";

/** Local development's rule (an unset allow-list admits any host name), or a deployment's with `unsetAdmitsAny` false. */
const webhooks = (allowedHosts?: string, unsetAdmitsAny = true) => ({ setting: "WEBHOOK_ALLOWED_HOSTS" as const, allowedHosts, unsetAdmitsAny });

describe("egress rules", () => {
  it.each([
    ["https://example.com/", "example.com", true],
    ["https://a.example.com/", "example.com", true],
    ["https://a.b.example.com./x", "example.com", true], // a trailing root dot is the same name
    ["https://badexample.com/", "example.com", false], // a suffix match is by label, not by text
    ["https://example.com.evil.test/", "example.com", false],
    ["https://hooks.example.org/", " example.com , .example.org ", true], // entries trimmed, a leading dot ignored
    ["https://hooks.example.org/", "*.example.org", true],
    ["https://anything.test/", undefined, true], // unset: any host name
    ["https://anything.test/", " , ", true], // blank entries only: as unset
  ])("%s under allow-list %j: allowed %s", (url, allowed, ok) => {
    const refusal = egressRefusal(url, webhooks(allowed));
    if (ok) expect(refusal).toBeUndefined();
    else expect(refusal).toBe(`${new URL(url).hostname} is not allowed by WEBHOOK_ALLOWED_HOSTS (${parseAllowedHosts(allowed).join(", ")})`);
  });

  it.each([
    "https://10.0.0.1/",
    "https://169.254.169.254/latest/meta-data",
    "https://[fd00::1]/",
    "https://0xa9.0xfe.0xa9.0xfe/", // the URL parser turns every IPv4 spelling into dotted decimal
    "https://2852039166/",
  ])("refuses the IP literal %s, allow-list or not", (url) => {
    for (const allowed of [undefined, "example.com"]) {
      expect(egressRefusal(url, webhooks(allowed))).toMatch(/is an IP address: only host names may be used/);
    }
  });

  it.each(["http://localhost:8080/", "http://127.0.0.1/", "http://127.9.8.7:1/", "http://[::1]:3000/", "http://api.localhost/"])(
    "always allows the loopback host of %s: a deployed Worker cannot reach it, and local development keeps the same rules",
    (url) => {
      expect(isLoopbackHostname(new URL(url).hostname)).toBe(true);
      expect(egressRefusal(url, webhooks("example.com"))).toBeUndefined();
      expect(httpsRefusal(new URL(url))).toBeUndefined();
    },
  );

  it("requires https off loopback", () => {
    expect(httpsRefusal(new URL("https://k8s.example.com"))).toBeUndefined();
    expect(httpsRefusal(new URL("http://k8s.example.com"))).toMatch(/^must be https \(got http;/);
    expect(httpsRefusal(new URL("http://127.0.0.1.example.com"))).toMatch(/^must be https/);
    expect(httpsRefusal(new URL("ftp://127.0.0.1"))).toMatch(/^must be https \(got ftp;/);
  });

  it("fails closed in a deployment: an unset allow-list admits no host name but loopback, unless ALLOW_ANY_EGRESS (review N8)", () => {
    expect(egressRefusal("https://hooks.example.com/", webhooks(undefined, false))).toMatch(/^hooks\.example\.com is refused: WEBHOOK_ALLOWED_HOSTS is unset.*ALLOW_ANY_EGRESS = "true"/);
    expect(egressRefusal("https://169.254.169.254.nip.io/", webhooks(" , ", false))).toMatch(/WEBHOOK_ALLOWED_HOSTS is unset/);
    expect(egressRefusal("https://localhost:8443/", webhooks(undefined, false))).toBeUndefined();
    expect(egressRefusal("https://hooks.example.com/", webhooks("example.com", false))).toBeUndefined();
    const rule = (settings: Parameters<typeof egressRule>[0]) => egressRule(settings, "CLUSTER_ALLOWED_HOSTS");
    expect(rule({}).unsetAdmitsAny).toBe(false);
    expect(rule({ ALLOW_ANY_EGRESS: "true" }).unsetAdmitsAny).toBe(true);
    expect(rule({ ALLOW_UNAUTHENTICATED: "true" }).unsetAdmitsAny).toBe(true);
    expect(rule({ CLUSTER_ALLOWED_HOSTS: "k8s.example.com", WEBHOOK_ALLOWED_HOSTS: "x" }).allowedHosts).toBe("k8s.example.com");
  });

  it("refuses the Worker's own host names (the request's, ACCESS_HOSTNAMES), even when an allow-list admits them", () => {
    const own = egressRule({ WEBHOOK_ALLOWED_HOSTS: "example.com", ACCESS_HOSTNAMES: "Informers.example.com, " }, "WEBHOOK_ALLOWED_HOSTS", "Edge.Example.com.");
    expect(own.ownHosts).toEqual(["informers.example.com", "edge.example.com"]);
    for (const url of ["https://edge.example.com/x", "https://EDGE.example.com./x", "https://informers.example.com:8443/"]) {
      expect(egressRefusal(url, own), url).toMatch(/is this Worker's own host name/);
    }
    expect(egressRefusal("https://hooks.edge.example.com/", own)).toBeUndefined();
  });

  it("names a text that is no URL", () => {
    expect(egressRefusal("not a url", webhooks())).toBe("'not a url' is not an absolute URL");
  });
});
