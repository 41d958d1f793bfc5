/**
 * `kubectl version` on /k8s (issue 30 item 6, review G10): the server version kubectl prints, and
 * warns of skew against, is the API server's the Worker mirrors, not a constant of this deployment.
 * Argo CD reads the same `/version` per cluster.
 */
import { describe, expect, it } from "vitest";
import { KUBECTL_MISSING, kubectlJson, kubectlSuite } from "./kubectl.ts";

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl version on /k8s"), () => {
  it("prints the mirrored API server's serverVersion", async () => {
    type Versions = { serverVersion: Record<string, string> };
    const [edge, fake] = await Promise.all([
      kubectlJson<Versions>(["version", "-o", "json"], { config: "edge" }),
      kubectlJson<Versions>(["version", "-o", "json"], { config: "fake" }),
    ]);
    // The fake API server's version is not this deployment's stand-in (v1.32.0), so this means something.
    expect(fake.serverVersion.gitVersion).not.toBe("v1.32.0");
    expect(edge.serverVersion).toEqual(fake.serverVersion);
  });
});
