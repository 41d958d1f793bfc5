/**
 * The status page's HTML (API.md "Operating"), rendered from a metrics snapshot (metrics/collect.ts)
 * with hono's `html` helper, which escapes every interpolated value.
 *
 * What it promises: the basic view needs no JavaScript (it refreshes itself with a meta refresh, the
 * redeliver buttons are plain forms); it reads on a phone (one column, no table wider than the
 * screen: a table scrolls inside its box, a card scrolls rather than lose its border, and names wrap
 * only at separators, never mid-word — issue 30); it shows no secret (a subscription's receiver is shown by host only: a URL's path or
 * query may carry a token; a cluster's API server likewise). Issue 12: a table of the clusters
 * comes first, then one section per cluster holding its informers' sections, each of which names
 * its cluster, as its subscriptions do (`data-cluster`). A cluster's health there is read off its
 * informers' watches, not probed: the page refreshes every REFRESH_SECONDS, and a live probe
 * (`GET /clusters`) would make each refresh wait on a dead API server.
 */
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { DEFAULT_CLUSTER, informerObjectName } from "../clusters/cluster.ts";
import type { ClusterSnapshot, InformerSnapshot, MetricsSnapshot, SubscriptionSnapshot } from "../metrics/collect.ts";
import { perMinute } from "../cache/log-counters.ts";

export const REFRESH_SECONDS = 15;

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

export interface Notice {
  subscription: string;
  redelivered: number;
  failed: number;
}

export function renderStatusPage(snapshot: MetricsSnapshot, notice?: Notice): Html {
  const informers = snapshot.informers;
  const groups = clusterGroups(snapshot);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>edge-informer status</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<header>
  <h1>edge-informer</h1>
  <p class="meta">${plural(snapshot.clusters.length, "cluster")} · ${plural(informers.length, "informer")} · updated <time datetime="${new Date(snapshot.at).toISOString()}">${clock(snapshot.at)}</time> · refreshes every ${REFRESH_SECONDS} s${snapshot.errors > 0 ? html` · <span class="bad">${snapshot.errors} could not be read</span>` : ""}</p>
</header>
<main>
${notice ? noticeBox(notice) : ""}
${clusterTable(groups)}
${informers.length === 0 ? html`<p class="empty">No informers yet: declare them in <code>INFORMERS</code>, or <code>PUT /informers/{name}</code> (<code>PUT /clusters/{cluster}/informers/{name}</code> in another cluster).</p>` : ""}
${groups.filter((group) => group.informers.length > 0).map((group) => clusterSection(group, snapshot.at))}
</main>
</body>
</html>`;
}

interface ClusterGroup {
  cluster: ClusterSnapshot;
  /** Its informers, by name. */
  informers: InformerSnapshot[];
}

/** Each cluster with its informers: the registry's order (default first), then any informer's cluster it did not list (removed meanwhile). */
function clusterGroups(snapshot: MetricsSnapshot): ClusterGroup[] {
  const groups = new Map<string, ClusterGroup>(snapshot.clusters.map((cluster) => [cluster.name, { cluster, informers: [] }]));
  for (const informer of snapshot.informers) {
    const name = informer.identity.cluster;
    if (!groups.has(name)) groups.set(name, { cluster: { name, source: "api", host: "", informers: 0 }, informers: [] });
    groups.get(name)!.informers.push(informer);
  }
  for (const group of groups.values()) group.informers.sort((a, b) => a.identity.informer.localeCompare(b.identity.informer));
  return [...groups.values()];
}

const SOURCE_TEXT: Record<ClusterSnapshot["source"], string> = { environment: "KUBE_API_URL", config: "CLUSTERS", api: "PUT /clusters", internal: "the factory" };

function clusterTable(groups: ClusterGroup[]): Html {
  return html`<section class="clusters" aria-label="Clusters">
  <h2>Clusters</h2>
  <div class="scroll">
  <table>
    <thead><tr><th>Cluster</th><th>API server</th><th>Informers</th><th>Watching</th></tr></thead>
    <tbody>${groups.map((group) => clusterRow(group))}</tbody>
  </table>
  </div>
</section>`;
}

function clusterRow({ cluster, informers }: ClusterGroup): Html {
  const watching = informers.filter((i) => following(i.metrics.progress.watch.state)).length;
  const failing = informers.filter((i) => i.metrics.progress.watch.state === "backoff").length;
  const tone = informers.length === 0 ? "quiet" : failing > 0 ? "bad" : watching === informers.length ? "ok" : "warn";
  return html`<tr data-cluster="${cluster.name}">
      <td class="name"><a href="#cluster-${cluster.name}">${cluster.name}</a></td>
      <td><span class="host" data-field="server">${cluster.host ? atSeparators(cluster.host) : "not configured"}</span> <span class="age">${SOURCE_TEXT[cluster.source]}</span></td>
      <td data-field="informers">${informers.length}</td>
      <td data-field="health"><span class="${tone}">${watching} of ${informers.length}</span>${failing > 0 ? html` <span class="bad">(${failing} backing off)</span>` : ""}</td>
    </tr>`;
}

function clusterSection({ cluster, informers }: ClusterGroup, now: number): Html {
  return html`<section class="cluster" id="cluster-${cluster.name}" data-cluster="${cluster.name}">
  <h2>Cluster ${cluster.name}${cluster.name === DEFAULT_CLUSTER ? html` <span class="resource">KUBE_API_URL</span>` : ""}</h2>
  ${informers.map((informer) => informerSection(informer, now))}
</section>`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function noticeBox(notice: Notice): Html {
  return html`<p class="notice" role="status">Redelivered ${notice.redelivered} dead letter${notice.redelivered === 1 ? "" : "s"} of <code>${notice.subscription}</code>${notice.failed > 0 ? html`; ${notice.failed} failed (the endpoint still refuses them)` : ""}.</p>`;
}

function informerSection(snapshot: InformerSnapshot, now: number): Html {
  const { metrics: m, identity } = snapshot;
  const p = m.progress;
  const series = perMinute(m, now);
  const relistCauses = Object.entries(m.counters.relists).filter(([, n]) => n > 0);
  const address = { cluster: identity.cluster, name: identity.informer };
  return html`<section class="informer" id="informer-${informerObjectName(address)}" data-informer="${identity.informer}" data-cluster="${identity.cluster}">
  <h3><span class="resource">${identity.cluster} /</span> ${identity.informer} <span class="resource">${m.resource}</span> ${p.synced ? html`<span class="badge ok" data-field="synced">synced</span>` : html`<span class="badge warn" data-field="synced">not synced</span>`}</h3>
  <dl class="facts">
    <div><dt>Objects</dt><dd data-field="objects">${p.objects.toLocaleString("en")}</dd></div>
    <div><dt>Queue</dt><dd data-field="queue">${p.queueDepth}</dd></div>
    <div><dt>Watch</dt><dd data-field="watch"><span class="badge ${following(p.watch.state) ? "ok" : p.watch.state === "backoff" ? "bad" : "warn"}">${p.watch.state}</span>${p.watch.state === "sleeping" ? html` <span class="age">wakes in ${age(p.wakeAt - now)}</span>` : p.watch.since ? html` <span class="age">for ${age(now - Date.parse(p.watch.since))}</span>` : ""}</dd></div>
    <div><dt>Relists</dt><dd data-field="relists">${Object.values(m.counters.relists).reduce((a, b) => a + b, 0)}${relistCauses.length > 0 ? html` <span class="age">(${relistCauses.map(([cause, n]) => `${cause} ${n}`).join(", ")})</span>` : ""}</dd></div>
    <div><dt>Last event</dt><dd data-field="last-event">${m.lastEventAt === null ? "none yet" : `${age(now - m.lastEventAt)} ago`}</dd></div>
    <div class="wide"><dt>Events per minute <span class="age">(last hour: ${series.reduce((a, b) => a + b, 0).toLocaleString("en")})</span></dt><dd>${sparkline(series)}</dd></div>
    <div class="wide"><dt>Last error</dt><dd data-field="last-error">${p.lastError === null ? html`<span class="quiet">none</span>` : html`<span class="bad">${m.lastErrorReason ?? ""}</span> ${p.lastError}${m.lastErrorAt === null ? "" : html` <span class="age">(${age(now - m.lastErrorAt)} ago)</span>`}`}</dd></div>
  </dl>
  ${subscriptionTable(snapshot.subscriptions, now)}
</section>`;
}

function subscriptionTable(subscriptions: SubscriptionSnapshot[], now: number): Html {
  if (subscriptions.length === 0) return html`<p class="quiet">No webhook subscriptions.</p>`;
  return html`<h4>Subscriptions</h4>
  <ul class="subscriptions">${subscriptions.map((s) => subscriptionItem(s, now))}</ul>`;
}

function subscriptionItem(snapshot: SubscriptionSnapshot, now: number): Html {
  const { metrics: m } = snapshot;
  const tone = m.state === "active" ? "ok" : m.state === "failing" ? "bad" : "warn";
  return html`<li class="subscription" id="${m.id}" data-subscription="${m.id}" data-cluster="${snapshot.identity.cluster}">
    <div class="sub-head"><code>${m.id}</code> → <span class="host">${atSeparators(m.host)}</span> <span class="badge ${tone}" data-field="state">${m.state}</span></div>
    <dl class="facts small">
      <div><dt>Lag</dt><dd data-field="lag">${snapshot.lagEvents} event${snapshot.lagEvents === 1 ? "" : "s"}${snapshot.lagSeconds ? html` <span class="age">(${age(snapshot.lagSeconds * 1000)})</span>` : ""}${m.marker ? html` <span class="age">+ ${m.marker === "replay" ? "replay" : "resync"} in progress</span>` : ""}</dd></div>
      <div><dt>Last delivery</dt><dd data-field="last-delivery">${m.lastDeliveryAt === null ? "never" : `${age(now - m.lastDeliveryAt)} ago`}</dd></div>
      <div><dt>Failures</dt><dd data-field="failures">${m.consecutiveFailures}</dd></div>
      <div><dt>Dead letters</dt><dd data-field="dead-letters">${m.deadLetters}</dd></div>
      ${m.lastError ? html`<div class="wide"><dt>Last error</dt><dd data-field="sub-error">${m.lastError}</dd></div>` : ""}
    </dl>
    ${m.deadLetters > 0
      ? html`<form method="post" action="/status/subscriptions/${m.id}/redeliver"><button type="submit">Redeliver dead letters</button> <span class="age">needs the admin token</span></form>`
      : ""}
  </li>`;
}

/** A host (or any dotted name) that may wrap after each `.`, `:` or `/` and nowhere else: `<wbr>` leaves its text as it is. */
function atSeparators(text: string): Html {
  const parts = text.split(/(?<=[.:/])/);
  return html`${parts.map((part, i) => (i === 0 ? html`${part}` : html`${raw("<wbr>")}${part}`))}`;
}

/** The last hour, one bar per minute, as inline SVG (no script, no image request). */
function sparkline(series: number[]): Html {
  const width = 180;
  const height = 28;
  const max = Math.max(1, ...series);
  const step = width / series.length;
  const bars = series
    .map((n, i) => {
      const h = n === 0 ? 0 : Math.max(1, Math.round((n / max) * (height - 2)));
      return `<rect x="${(i * step).toFixed(1)}" y="${height - h}" width="${Math.max(1, step - 0.6).toFixed(1)}" height="${h}"/>`;
    })
    .join("");
  return html`<svg class="spark" role="img" aria-label="events per minute over the last hour, at most ${max} a minute" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-field="sparkline" data-max="${max}">${raw(bars)}<line x1="0" y1="${height - 0.5}" x2="${width}" y2="${height - 0.5}"/></svg>`;
}

/** Whether an informer follows its resource: watching, or sleeping between watch windows (maxLagSeconds). */
function following(state: string): boolean {
  return state === "watching" || state === "sleeping";
}

function age(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} d`;
}

function clock(at: number): string {
  return `${new Date(at).toISOString().slice(11, 19)} UTC`;
}

const STYLE = `
:root { color-scheme: light dark; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --line: #d0d7de; --muted: #57606a; }
@media (prefers-color-scheme: dark) { :root { --ok: #3fb950; --warn: #d29922; --bad: #f85149; --line: #30363d; --muted: #8b949e; } }
* { box-sizing: border-box; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 12px; max-width: 980px; }
h1 { font-size: 1.4rem; margin: 0; }
h2 { font-size: 1.25rem; margin: 16px 0 8px; }
h3 { font-size: 1.15rem; margin: 0 0 8px; display: flex; flex-wrap: wrap; gap: 6px; align-items: baseline; }
h4 { font-size: 1rem; margin: 14px 0 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px 4px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
td.name, .sub-head code { white-space: nowrap; }
.scroll { overflow-x: auto; }
th { font-size: .8rem; color: var(--muted); font-weight: normal; white-space: nowrap; }
.meta, .age, .quiet, .resource { color: var(--muted); font-size: .85rem; font-weight: normal; }
section.informer { border: 1px solid var(--line); border-radius: 8px; padding: 12px; margin: 12px 0; overflow-x: auto; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 8px 16px; margin: 0; }
.facts div { min-width: 0; }
.facts .wide { grid-column: 1 / -1; }
dt { font-size: .8rem; color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: .8rem; border: 1px solid currentColor; }
.ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); }
.spark rect { fill: var(--ok); } .spark line { stroke: var(--line); }
ul.subscriptions { list-style: none; padding: 0; margin: 0; }
li.subscription { border-top: 1px solid var(--line); padding: 8px 0; }
.sub-head { margin-bottom: 4px; }
.facts.small { grid-template-columns: repeat(auto-fill, minmax(120px, 1fr)); }
form { margin-top: 6px; }
button { font: inherit; padding: 4px 12px; border-radius: 6px; border: 1px solid var(--line); cursor: pointer; }
.notice { border: 1px solid var(--ok); border-radius: 8px; padding: 8px 12px; }
code { font-size: .85em; }
`;
