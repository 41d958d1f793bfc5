/**
 * No credential starves the others (issue 29, review N1), through the Worker's front door: ten
 * teams, each with a read credential of its own (TOKENS), share an informer of 2,000 pods. One team
 * is hostile: it opens watch-lists it never reads (slow listings), loops searches with a selector
 * (scans) and fills its cap of watches. The nine others ask for what kubectl and client-go ask all
 * day (a selector list, an unpaged list, a watch-list read to its initial-events-end bookmark) and
 * get every answer — none shed — while the informer keeps ingesting.
 *
 * Before admission was fair, the hostile team's ten slow listings kept both heavy-read slots and
 * filled the queue: every other team's heavy read answered 429 until they ended (minutes through
 * relays, for ever without).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/auth/credentials.ts";
import { HEAVY_READS_QUEUED_PER_CREDENTIAL } from "../../src/k8s/admission.ts";
import { MAX_WATCHERS_PER_PRINCIPAL } from "../../src/k8s/watcher-caps.ts";
import { createApp } from "../../src/http/app.ts";
import { pod } from "../fake-apiserver/client.ts";
import { startInCluster } from "../helpers/clusters.ts";
import { waitFor } from "../helpers/informer.ts";
import { readLines } from "../helpers/watch-lines.ts";

const TEAMS = 10;
const token = (team: number) => `team-${team}-read-token-0123456789abcdef0123`;

/** A deployment whose readers are ten teams, each with its own credential. */
async function deployment() {
  const entries = await Promise.all(
    Array.from({ length: TEAMS }, async (_, team) => ({ name: `team-${team}`, role: "read", clusters: ["*"], sha256: await sha256Hex(token(team)) })),
  );
  const settings = { ...env, ALLOW_UNAUTHENTICATED: "false", READ_TOKEN: undefined, TOKENS: JSON.stringify(entries) } as typeof env;
  const app = createApp();
  return async (team: number, path: string) => app.request(`http://localhost${path}`, { headers: { authorization: `Bearer ${token(team)}` } }, settings);
}

describe("fair under a hostile credential (issue 29)", () => {
  it("serves nine teams every selector list, unpaged list and watch-list while the tenth holds slow listings, loops searches and fills its watch cap", async () => {
    const { cluster, fake, remove } = await startInCluster("fair", {}, 2_000);
    const as = await deployment();
    const base = `/k8s/clusters/${cluster}/api/v1/pods`;
    const hostile = 0;

    // Slow listings: watches from RV "" start with every pod (6 MB); the hostile client reads none.
    const slow = await Promise.all(Array.from({ length: 10 }, () => as(hostile, `${base}?watch=1`)));
    // Its share of the queue holds; beyond it, its own listings are shed — nobody else's.
    expect(slow.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(HEAVY_READS_QUEUED_PER_CREDENTIAL);
    for (const response of slow.filter((r) => r.status !== 200)) expect(response.status).toBe(429);
    // Its cap of plain watches filled (cheap: no listing).
    const rv = (await (await as(hostile, `${base}?limit=1`)).json<{ metadata: { resourceVersion: string } }>()).metadata.resourceVersion;
    const capped: Response[] = [];
    for (let i = 0; capped.length < MAX_WATCHERS_PER_PRINCIPAL; i++) {
      const response = await as(hostile, `${base}?watch=1&resourceVersion=${rv}`);
      if (response.status !== 200) break;
      capped.push(response);
    }
    expect((await as(hostile, `${base}?watch=1&resourceVersion=${rv}`)).status).toBe(429);
    // Searches with a selector matching nothing, looping while the others read.
    let searching = true;
    const searches: number[] = [];
    const loop = async () => {
      while (searching) {
        const response = await as(hostile, `/search/pods?labelSelector=nomatch%3Dx&limit=100`);
        searches.push(response.status);
        await response.body?.cancel();
        // As fast as a client across the internet loops (one process runs every party here).
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const loops = [loop(), loop(), loop()];

    // The nine others: what kubectl and client-go ask.
    const statuses: number[] = [];
    const asked = async (team: number, path: string) => {
      const response = await as(team, path);
      statuses.push(response.status);
      return response;
    };
    await Promise.all(
      Array.from({ length: TEAMS - 1 }, async (_, i) => {
        const team = i + 1;
        for (let round = 0; round < 1; round++) {
          const selected = await asked(team, `${base}?labelSelector=app%3Dweb&limit=100`);
          await selected.body?.cancel();
          const unpaged = await asked(team, base);
          if (unpaged.status === 200) expect((await unpaged.json<{ items: unknown[] }>()).items).toHaveLength(2_000);
          const watchList = await asked(team, `${base}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=`);
          if (watchList.status === 200) {
            const lines = await readLines(watchList.body!, 2_001);
            expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "BOOKMARK", object: { metadata: { annotations: { "k8s.io/initial-events-end": "true" } } } });
          }
        }
      }),
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(statuses).toHaveLength((TEAMS - 1) * 3);

    // Ingest kept up: a change upstream reaches a watcher of another team.
    const latest = (await (await as(1, `${base}?limit=1`)).json<{ metadata: { resourceVersion: string } }>()).metadata.resourceVersion;
    const watcher = await as(1, `${base}?watch=1&resourceVersion=${latest}`);
    await fake.create("pods", pod({ name: "after-the-storm", namespace: "ns-0" }));
    const [added] = await readLines(watcher.body!, 1);
    expect(JSON.parse(added!)).toMatchObject({ type: "ADDED", object: { metadata: { name: "after-the-storm" } } });

    searching = false;
    await Promise.all(loops);
    // The hostile searches were admitted in their share: served or shed, never an error.
    expect(searches.every((status) => status === 200)).toBe(true);
    for (const response of [...slow, ...capped]) await response.body?.cancel().catch(() => {});
    await waitFor("the hostile streams to end", async () => true);
    await remove();
  }, 180_000);
});
