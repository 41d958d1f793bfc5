/**
 * The status page in a real browser (Debian's chromium through playwright-core): against the e2e
 * Worker, whose informers have synced, with a subscription whose endpoint refuses every connection
 * (failing) and one that dead-letters. The page is read with JavaScript off (the basic view needs
 * none), on a phone-sized screen (nothing wider than the screen), and its redeliver button is
 * pressed with the admin token. A second cluster (issue 12), added at run time with a token, shows
 * in the clusters table and in a section of its own. Screenshots go to test-results/. No secret —
 * nor the cluster's token — appears on the page, nor anywhere in the Worker's output (wrangler
 * dev's log), whose JSON lines tell of the failures and name each one's cluster.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureChromium, launchChromium } from "./chromium.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { pod } from "../fake-apiserver/builders.ts";
import { e2e, workerAdmin as admin } from "./context.ts";
import { ROOT } from "./worker.ts";
import { waitFor } from "./wait.ts";

const CHROMIUM_MISSING = ensureChromium();
if (CHROMIUM_MISSING) console.warn(`status page browser tests skipped: ${CHROMIUM_MISSING}`);
const suite = (title: string) => (CHROMIUM_MISSING === undefined ? title : `${title} [skipped: ${CHROMIUM_MISSING}]`);
const OUTPUT = join(ROOT, "test-results");
/** Nothing listens here: every delivery fails to connect. */
const REFUSING_URL = "https://127.0.0.1:9/hook";
/** The second cluster: a fake cluster of the e2e fake API server, whose API needs this token. */
const SECOND = "staging";
const SECOND_TOKEN = `e2e-cluster-token-${crypto.randomUUID()}`;

interface Created {
  id: string;
  secret: string;
}


describe.skipIf(CHROMIUM_MISSING !== undefined)(suite("status page in chromium"), () => {
  let browser: Browser;
  let failing: Created;
  let deadLettering: Created;
  let eastFailing: Created;

  beforeAll(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const east = await FakeCluster.create(e2e().clusterUrl.replace(/\/clusters\/[^/]+$/, ""), { token: SECOND_TOKEN });
    for (const name of ["api-1", "api-2", "worker-1"]) await east.create("pods", pod({ name, namespace: "default" }));
    await admin("PUT", `/clusters/${SECOND}`, { server: east.url, token: SECOND_TOKEN });
    await admin("PUT", `/clusters/${SECOND}/informers/pods`, { resource: "pods" });
    eastFailing = await admin<Created>("POST", `/clusters/${SECOND}/informers/pods/subscriptions`, { url: REFUSING_URL, timeoutSeconds: 2 });
    failing = await admin<Created>("POST", "/informers/pods/subscriptions", { url: REFUSING_URL, timeoutSeconds: 2 });
    deadLettering = await admin<Created>("POST", "/informers/deployments/subscriptions", { url: REFUSING_URL, retryBudgetSeconds: 1, maxBatchSize: 100 });
    await waitFor(
      async () => {
        const a = await admin<{ state: string; consecutiveFailures: number }>("GET", `/subscriptions/${failing.id}`);
        const b = await admin<{ deadLetters: number }>("GET", `/subscriptions/${deadLettering.id}`);
        const c = await admin<{ state: string }>("GET", `/subscriptions/${eastFailing.id}`);
        const east = await admin<{ synced: boolean }>("GET", `/clusters/${SECOND}/informers/pods`);
        return a.state === "failing" && a.consecutiveFailures >= 1 && b.deadLetters > 0 && c.state === "failing" && east.synced;
      },
      { timeoutMs: 45_000, intervalMs: 250, what: "one subscription failing and one with dead letters, and the second cluster synced" },
    );
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    for (const sub of [failing, deadLettering]) if (sub) await admin("DELETE", `/subscriptions/${sub.id}`).catch(() => {});
    await admin("DELETE", `/clusters/${SECOND}?cascade=true`).catch(() => {});
  });

  it("shows the informers and the subscriptions' health without JavaScript, and hides every secret", async () => {
    const { workerUrl, readToken, adminToken } = e2e();
    const context = await browser.newContext({
      javaScriptEnabled: false,
      httpCredentials: { username: "ops", password: readToken },
      viewport: { width: 1100, height: 900 },
    });
    const page = await context.newPage();
    const response = await page.goto(`${workerUrl}/`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe("edge-informer status");

    const pods = page.locator('section[data-cluster="default"] section[data-informer="pods"]');
    await expect(pods.locator('[data-field="synced"]').textContent()).resolves.toBe("synced");
    expect(Number((await pods.locator('[data-field="objects"]').textContent())!.replace(/,/g, ""))).toBeGreaterThan(0);
    await expect(pods.locator('[data-field="watch"] .badge').textContent()).resolves.toBe("watching");
    expect(await pods.locator('[data-field="sparkline"] rect').count()).toBe(60);
    expect(Number(await pods.locator('[data-field="sparkline"]').getAttribute("data-max"))).toBeGreaterThan(0);
    await expect(page.locator('section[data-informer="deployments"] [data-field="synced"]').textContent()).resolves.toBe("synced");

    // The clusters table, then each cluster's section: the second one's informer and subscription in it.
    const rows = await page.locator("section.clusters tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-cluster")));
    expect([rows[0], rows.includes(SECOND)]).toEqual(["default", true]); // the default cluster first (others may be declared too)
    await expect(page.locator(`tr[data-cluster="${SECOND}"] [data-field="informers"]`).textContent()).resolves.toBe("1");
    await expect(page.locator(`tr[data-cluster="${SECOND}"] [data-field="health"]`).textContent()).resolves.toBe("1 of 1");
    const east = page.locator(`section.cluster[data-cluster="${SECOND}"]`);
    await expect(east.locator("h2").textContent()).resolves.toBe(`Cluster ${SECOND}`);
    await expect(east.locator('section[data-informer="pods"] [data-field="objects"]').textContent()).resolves.toBe("3");
    await expect(east.locator(`li[data-subscription="${eastFailing.id}"] [data-field="state"]`).textContent()).resolves.toBe("failing");

    const sub = page.locator(`li[data-subscription="${failing.id}"]`);
    await expect(sub.locator('[data-field="state"]').textContent()).resolves.toBe("failing");
    expect(Number(await sub.locator('[data-field="failures"]').textContent())).toBeGreaterThanOrEqual(1);
    await expect(sub.locator(".host").textContent()).resolves.toBe("127.0.0.1:9");
    expect(await sub.locator('[data-field="sub-error"]').textContent()).toMatch(/request failed/);
    const dead = page.locator(`li[data-subscription="${deadLettering.id}"]`);
    expect(Number(await dead.locator('[data-field="dead-letters"]').textContent())).toBeGreaterThan(0);
    await expect(dead.locator("button").textContent()).resolves.toBe("Redeliver dead letters");

    const text = (await page.content()) + (await page.locator("body").innerText());
    for (const secret of [failing.secret, deadLettering.secret, eastFailing.secret, readToken, adminToken, REFUSING_URL, SECOND_TOKEN]) expect(text).not.toContain(secret);
    await page.screenshot({ path: join(OUTPUT, "status-page.png"), fullPage: true });
    await context.close();
  });

  it("reads on a phone: nothing is wider than the screen", async () => {
    const { workerUrl, readToken } = e2e();
    const context = await browser.newContext({
      httpCredentials: { username: "ops", password: readToken },
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
    });
    const page = await context.newPage();
    await page.goto(`${workerUrl}/`);
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth }));
    expect(widths.page).toBeLessThanOrEqual(widths.screen);
    await page.screenshot({ path: join(OUTPUT, "status-page-phone.png"), fullPage: true });
    await context.close();
  });

  // Issue 30 item 8: at 390 px the clusters table broke "default" into "defaul" / "t" (cells could
  // break anywhere, so the table squeezed the name column); a card's content must never run past
  // its border (a table scrolls inside its card instead).
  it.each([390, 1280])("at %i px no name or cell breaks mid-word, and every card holds its content", async (width) => {
    const { workerUrl, readToken } = e2e();
    const context = await browser.newContext({ javaScriptEnabled: false, httpCredentials: { username: "ops", password: readToken }, viewport: { width, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${workerUrl}/`);
    const layout = await page.evaluate(MEASURE_LAYOUT);
    await page.screenshot({ path: join(OUTPUT, `status-page-${width}.png`), fullPage: true });
    await context.close();
    expect(layout.words).toBeGreaterThan(0);
    expect(layout.split).toEqual([]);
    expect(layout.cards).toBeGreaterThan(0);
    expect(layout.overflowing).toEqual([]);
    expect(layout.pageWidth).toBeLessThanOrEqual(width);
  });

  it("asks for credentials, and redelivers dead letters only with the admin token", async () => {
    const { workerUrl, readToken, adminToken } = e2e();
    const basic = (token: string) => ({ authorization: `Basic ${Buffer.from(`ops:${token}`).toString("base64")}` });
    const anonymous = await fetch(`${workerUrl}/`, { headers: { accept: "text/html" } });
    expect([anonymous.status, anonymous.headers.get("www-authenticate")]).toEqual([401, 'Basic realm="edge-informer", charset="UTF-8"']);
    const redeliver = `${workerUrl}/status/subscriptions/${deadLettering.id}/redeliver`;
    const asReader = await fetch(redeliver, { method: "POST", headers: basic(readToken), redirect: "manual" });
    expect(asReader.status).toBe(401); // the read token does not redeliver
    const crossSite = await fetch(redeliver, { method: "POST", headers: { ...basic(adminToken), "sec-fetch-site": "cross-site" }, redirect: "manual" });
    expect(crossSite.status).toBe(403); // another site's page cannot press the button

    const operator = await browser.newContext({ javaScriptEnabled: false, httpCredentials: { username: "ops", password: adminToken } });
    const page = await operator.newPage();
    await page.goto(`${workerUrl}/`);
    await page.locator(`li[data-subscription="${deadLettering.id}"] button`).click();
    await page.waitForURL(/redelivered=/);
    // The endpoint still refuses: the first redelivery fails, and the page says so.
    await expect(page.locator(".notice").textContent()).resolves.toMatch(new RegExp(`Redelivered 0 dead letters of ${deadLettering.id}; 1 failed`));
    await operator.close();
  });

  it("logs the failing deliveries as JSON lines that name the subscription and carry no secret", async () => {
    const { workerLog, readToken, adminToken } = e2e();
    const lines = await waitFor(
      async () => {
        // wrangler may wrap a line (a level tag, colour codes): the JSON runs from {"level" to the last }.
        const text = readFileSync(workerLog, "utf8");
        const found = text.split("\n").filter((line) => line.includes('{"level"')).map((line) => line.slice(line.indexOf('{"level"'), line.lastIndexOf("}") + 1));
        if (!found.some((line) => line.includes(failing.id))) throw new Error(`no line names ${failing.id}; the log ends: ${text.slice(-1500)}`);
        return found;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: "the Worker's log lines about the failing subscription" },
    );
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed).toContainEqual(expect.objectContaining({ level: "warn", msg: "delivery failed", cluster: "default", informer: "pods", subscription: failing.id }));
    expect(parsed).toContainEqual(expect.objectContaining({ level: "warn", msg: "dead-lettered", cluster: "default", informer: "deployments", subscription: deadLettering.id }));
    expect(parsed).toContainEqual(expect.objectContaining({ level: "warn", msg: "delivery failed", cluster: SECOND, informer: "pods", subscription: eastFailing.id }));
    const everything = readFileSync(workerLog, "utf8");
    for (const secret of [failing.secret, deadLettering.secret, eastFailing.secret, readToken, adminToken, SECOND_TOKEN]) expect(everything).not.toContain(secret);
  });
});

/**
 * Runs in the page (no closure: playwright sends its source). `split`: the words (runs of letters
 * and digits; a break at `-`, `.`, `:` or a space is a fine place to wrap) of table cells, card
 * headings and subscription ids that are laid out on more than one line. `overflowing`: elements
 * whose right edge passes their card's (an informer's section, the clusters section) with no
 * scrolling box between them and the card.
 */
function MEASURE_LAYOUT() {
  const split: string[] = [];
  let words = 0;
  for (const cell of Array.from(document.querySelectorAll("td, th, section.informer h3, .sub-head code"))) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent!.matchAll(/[\p{L}\p{N}_]+/gu)) {
        words += 1;
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) split.push(`${cell.tagName.toLowerCase()} "${cell.textContent!.trim()}": "${word[0]}" on ${lines.size} lines`);
      }
    }
  }
  const scrolls = (el: Element) => ["auto", "scroll", "hidden"].includes(getComputedStyle(el).overflowX);
  const overflowing: string[] = [];
  const cards = Array.from(document.querySelectorAll("section.informer, section.clusters"));
  for (const card of cards) {
    const right = card.getBoundingClientRect().right;
    for (const el of Array.from(card.querySelectorAll("*"))) {
      if (el.getBoundingClientRect().right <= right + 0.5) continue;
      let box: Element | null = el.parentElement;
      while (box && box !== card && !scrolls(box)) box = box.parentElement;
      if (box === card && !scrolls(card)) overflowing.push(`${el.tagName.toLowerCase()}.${el.className} passes ${card.id || card.className}'s right edge by ${Math.round(el.getBoundingClientRect().right - right)} px`);
    }
  }
  return { words, split, cards: cards.length, overflowing, pageWidth: document.documentElement.scrollWidth };
}
