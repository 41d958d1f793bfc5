/** Subscription bodies: defaults, and which endpoint URLs are accepted under which policy. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { queueTargets } from "../../src/delivery/queue-target.ts";
import { checkEndpointUrl, parseSubscriptionSpec, sharedSecretBindings, webhookUrlPolicy } from "../../src/delivery/subscription-spec.ts";

const dev = webhookUrlPolicy({ ALLOW_UNAUTHENTICATED: "true" });
/** A deployment that means to send anywhere (an unset allow-list otherwise admits no host: review N8). */
const prod = webhookUrlPolicy({ ALLOW_ANY_EGRESS: "true" });

describe("subscription spec", () => {
  it("fills the documented defaults", () => {
    expect(parseSubscriptionSpec({ url: "https://hooks.example.com/" }, prod)).toEqual({
      url: "https://hooks.example.com/",
      events: ["add", "update", "delete", "sync"],
      replayExisting: true,
      maxBatchSize: 1,
      retryBudgetSeconds: 86_400,
      timeoutSeconds: 15,
    });
  });

  it("takes a queue binding instead of a URL, exactly one of the two, and no queue unless one is allowed", () => {
    expect(parseSubscriptionSpec({ queue: "EVENTS" }, prod, queueTargets(env))).toMatchObject({ queue: "EVENTS", maxBatchSize: 1 });
    expect(() => parseSubscriptionSpec({ queue: "EVENTS" }, prod)).toThrow(/WEBHOOK_QUEUES is unset/);
    expect(() => parseSubscriptionSpec({ queue: "EVENTS", url: "https://hooks.example.com/" }, prod, queueTargets(env))).toThrow(/exactly one of 'url'/);
    expect(() => parseSubscriptionSpec({}, prod, queueTargets(env))).toThrow(/exactly one of 'url'/);
    expect(() => parseSubscriptionSpec({ queue: "EVENTS-1" }, prod, queueTargets(env))).toThrow(/queue: must name a queue producer binding/);
  });

  it.each(["http://localhost:3000/", "http://127.0.0.1/x", "http://127.1.2.3:9/", "http://[::1]:8080/", "http://api.localhost/"])(
    "accepts plain http to loopback %s only in local development",
    (url) => {
      expect(checkEndpointUrl(url, dev).href).toBe(url);
      expect(() => checkEndpointUrl(url, prod)).toThrow(/ALLOW_UNAUTHENTICATED/);
    },
  );

  it.each([
    ["http://hooks.example.com/", /must be https/],
    ["http://127.0.0.1.example.com/", /must be https/],
    ["ftp://hooks.example.com/", /must be https \(got ftp\)/],
    ["hooks.example.com/x", /not an absolute URL/],
    ["https://a:b@hooks.example.com/", /credentials/],
    ["https://hooks.example.com/#x", /fragment/],
  ])("refuses %s", (url, message) => {
    expect(() => checkEndpointUrl(url, dev)).toThrow(message);
  });

  it("holds receivers to WEBHOOK_ALLOWED_HOSTS and refuses IP literals but loopback (issue 17)", () => {
    const allowList = webhookUrlPolicy({ ALLOW_UNAUTHENTICATED: "true", WEBHOOK_ALLOWED_HOSTS: "example.com" });
    expect(checkEndpointUrl("https://hooks.example.com/x", allowList).href).toBe("https://hooks.example.com/x");
    expect(checkEndpointUrl("http://127.0.0.1:9/x", allowList).href).toBe("http://127.0.0.1:9/x");
    expect(() => checkEndpointUrl("https://hooks.badexample.com/", allowList)).toThrow(
      "invalid subscription: url: hooks.badexample.com is not allowed by WEBHOOK_ALLOWED_HOSTS (example.com)",
    );
    expect(() => checkEndpointUrl("https://169.254.169.254/", prod)).toThrow(/^invalid subscription: url: 169\.254\.169\.254 is an IP address/);
    expect(() => checkEndpointUrl("https://[fd00::1]/", prod)).toThrow(/is an IP address/);
  });

  it("takes its policy from the environment", () => {
    expect(webhookUrlPolicy({ ALLOW_UNAUTHENTICATED: "true", WEBHOOK_ALLOWED_HOSTS: "example.com" }, "localhost")).toEqual({
      allowLoopbackHttp: true,
      egress: { setting: "WEBHOOK_ALLOWED_HOSTS", allowedHosts: "example.com", unsetAdmitsAny: true, ownHosts: ["localhost"] },
    });
    expect(webhookUrlPolicy({})).toEqual({ allowLoopbackHttp: false, egress: { setting: "WEBHOOK_ALLOWED_HOSTS", allowedHosts: undefined, unsetAdmitsAny: false, ownHosts: [] } });
  });

  it("refuses every receiver off loopback in a deployment with WEBHOOK_ALLOWED_HOSTS unset (review N8)", () => {
    expect(() => checkEndpointUrl("https://hooks.example.com/", webhookUrlPolicy({}))).toThrow(/WEBHOOK_ALLOWED_HOSTS is unset.*ALLOW_ANY_EGRESS/);
    expect(checkEndpointUrl("https://127.0.0.1:9/x", webhookUrlPolicy({})).href).toBe("https://127.0.0.1:9/x");
  });

  it("finds declared subscriptions that share a secretBinding, across informers and clusters", () => {
    const hook = (name: string, secretBinding: string) => ({ name, secretBinding });
    const specs = [
      { cluster: "default", name: "pods", subscriptions: [hook("audit", "AUDIT_SECRET"), hook("ops", "OPS_SECRET")] },
      { cluster: "prod", name: "pods", subscriptions: [hook("audit", "AUDIT_SECRET")] },
      { cluster: "default", name: "nodes", subscriptions: [hook("ops", "NODES_SECRET")] },
    ];
    expect(sharedSecretBindings(specs)).toEqual(new Map([["AUDIT_SECRET", ["pods.subscriptions.audit", "prod/pods.subscriptions.audit"]]]));
    expect(sharedSecretBindings(specs.slice(2))).toEqual(new Map());
  });
});
