/** The host rules shared by cluster servers and webhook receivers (src/net/egress.ts, issue 17). */
import { describe, expect, it } from "vitest";
import { egressRefusal, httpsRefusal, parseAllowedHosts } from "../../src/net/egress.ts";
import { isLoopbackHostname } from "../../src/net/loopback.ts";

const webhooks = (allowedHosts?: string) => ({ setting: "WEBHOOK_ALLOWED_HOSTS" as const, allowedHosts });

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

  it("names a text that is no URL", () => {
    expect(egressRefusal("not a url", webhooks())).toBe("'not a url' is not an absolute URL");
  });
});
