/**
 * kubectl's NotFound on /k8s reads as the API server's (issue 8): `kubectl get pod <missing>` exits 1
 * with `Error from server (NotFound): pods "<missing>" not found`. kubectl 1.32, after a 404 on a
 * namespaced get, also GETs the namespace (`/api/v1/namespaces/<ns>`) and reports that 404 instead
 * when the namespace is missing, so /k8s must answer that request as a server where the namespace
 * exists would.
 */
import { describe, expect, it } from "vitest";
import { KUBECTL_MISSING, kubectl, kubectlSuite } from "./kubectl.ts";

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl get of a missing object on /k8s"), () => {
  it("answers NotFound for a missing pod, as the API server does", async () => {
    for (const config of ["fake", "edge"] as const) {
      const result = await kubectl(["get", "pod", "no-such-pod", "-n", "shop"], { config });
      expect(result.code, config).toBe(1);
      expect(result.stderr.trim(), config).toBe('Error from server (NotFound): pods "no-such-pod" not found');
    }
  });
});
