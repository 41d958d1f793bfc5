/**
 * InformerFactory: one Durable Object per deployment, client-go's SharedInformerFactory. It keeps
 * the registry of informers, starts each (by configuring its InformerObject), keeps the declared
 * ones in step with `INFORMERS`, and on every cron tick re-arms any informer whose loop stopped
 * (DESIGN invariant 7, self-healing).
 *
 * Changes to the registry (put, remove, syncDeclared) run one at a time, in arrival order: every
 * isolate syncs `INFORMERS` on its first request, and the cron may too, so calls arrive together,
 * and a Durable Object interleaves them wherever one awaits an informer object.
 */
import { logger, setLogLevel } from "../log.ts";
import { DurableObject } from "cloudflare:workers";
import { InformerRegistry, type InformerSource, type RegisteredInformer } from "../cache/informer-registry.ts";
import { type InformerSpec, parseDeclaredInformers } from "../config.ts";
import { checkEndpointUrl, declaredSubscriptionId, SECRET_PATTERN } from "../delivery/subscription-spec.ts";
import type { Env } from "../env.ts";
import { fail, ok, type Result, unwrap } from "../errors.ts";
import { Db } from "../sql.ts";
import type { InformerStatus } from "./informer-object.ts";

export const FACTORY_NAME = "factory";

export interface DeclaredSync {
  added: string[];
  updated: string[];
  removed: string[];
  /** Declared subscriptions created, updated or removed. */
  subscriptions: string[];
  errors: string[];
}

export class InformerFactory extends DurableObject<Env> {
  #registry!: InformerRegistry;
  /** The tail of the queue of registry changes (#exclusive). Memory only: an evicted object has none in flight. */
  #changes: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    setLogLevel(env.LOG_LEVEL);
    ctx.blockConcurrencyWhile(async () => {
      this.#registry = new InformerRegistry(new Db(ctx.storage));
    });
  }

  /** Creates or updates an informer. Declared informers can only change through `INFORMERS`. */
  async put(
    spec: InformerSpec,
    source: InformerSource = "api",
    apiUrl?: string,
  ): Promise<Result<{ created: boolean; status: InformerStatus }>> {
    return this.#exclusive(() => this.#put(spec, source, apiUrl));
  }

  async #put(spec: InformerSpec, source: InformerSource, apiUrl?: string): Promise<Result<{ created: boolean; status: InformerStatus }>> {
    const existing = this.#registry.get(spec.name);
    if (existing?.source === "config" && source === "api") {
      return fail("Conflict", `informer '${spec.name}' is declared in INFORMERS (wrangler.toml): change it there`);
    }
    const configured = await this.#stub(spec.name).configure(spec, apiUrl);
    if (configured.ok) this.#registry.put(spec, source, Date.now());
    return configured;
  }

  async get(name: string): Promise<RegisteredInformer | undefined> {
    return this.#registry.get(name);
  }

  async list(): Promise<RegisteredInformer[]> {
    return this.#registry.list();
  }

  async remove(name: string, source: InformerSource = "api"): Promise<Result<null>> {
    return this.#exclusive(() => this.#remove(name, source));
  }

  async #remove(name: string, source: InformerSource): Promise<Result<null>> {
    const existing = this.#registry.get(name);
    if (!existing) return fail("NotFound", `informer '${name}' not found`);
    if (existing.source === "config" && source === "api") {
      return fail("Conflict", `informer '${name}' is declared in INFORMERS (wrangler.toml): remove it there`);
    }
    const subscriptions = await this.#stub(name).destroy();
    // A subscription without its informer has nothing to follow: delete them with it.
    await Promise.all(subscriptions.map((id) => this.env.SUBSCRIPTION.getByName(id).destroy(true)));
    this.#registry.delete(name);
    return ok(null);
  }

  /** Brings the declared informers in line with `INFORMERS`: adds, updates, removes. */
  async syncDeclared(informers: string | undefined): Promise<DeclaredSync> {
    return this.#exclusive(() => this.#syncDeclared(informers));
  }

  async #syncDeclared(informers: string | undefined): Promise<DeclaredSync> {
    const { specs, errors } = parseDeclaredInformers(informers);
    const result: DeclaredSync = { added: [], updated: [], removed: [], subscriptions: [], errors };
    for (const spec of specs) {
      const existing = this.#registry.get(spec.name);
      if (existing && JSON.stringify(existing.spec) === JSON.stringify(spec) && existing.source === "config") continue;
      const configured = await this.#stub(spec.name).configure(spec);
      if (!configured.ok) {
        result.errors.push(`${spec.name}: ${configured.error.message}`);
        continue;
      }
      this.#registry.put(spec, "config", Date.now());
      (existing ? result.updated : result.added).push(spec.name);
    }
    for (const spec of specs) await this.#syncDeclaredSubscriptions(spec, result);
    // A broken INFORMERS must not delete data: remove undeclared informers only when it parsed cleanly.
    const declared = new Set(specs.map((s) => s.name));
    for (const informer of errors.length > 0 ? [] : this.#registry.list()) {
      if (informer.source === "config" && !declared.has(informer.name)) {
        unwrap(await this.#remove(informer.name, "config"));
        result.removed.push(informer.name);
      }
    }
    for (const error of result.errors) logger.error("INFORMERS entry refused", { cause: "config", error });
    return result;
  }

  /**
   * Brings an informer's declared subscriptions in line with its spec: creates or updates each
   * (secrets from the Worker secrets they name), and deletes declared ones no longer listed.
   * Subscriptions created through the API are left alone.
   */
  async #syncDeclaredSubscriptions(spec: InformerSpec, result: DeclaredSync): Promise<void> {
    const declared = new Set<string>();
    let complete = true;
    for (const subscription of spec.subscriptions) {
      const id = declaredSubscriptionId(spec.name, subscription.name);
      declared.add(id);
      const where = `${spec.name}.subscriptions.${subscription.name}`;
      const secret = (this.env as unknown as Record<string, unknown>)[subscription.secretBinding];
      try {
        if (typeof secret !== "string" || !SECRET_PATTERN.test(secret)) {
          throw new Error(
            `the Worker secret '${subscription.secretBinding}' must hold a whsec_ secret (wrangler secret put ${subscription.secretBinding})`,
          );
        }
        checkEndpointUrl(subscription.url, { allowLoopbackHttp: this.env.ALLOW_UNAUTHENTICATED === "true" });
        const { name: _, secretBinding: __, ...subscriptionSpec } = subscription;
        const outcome = unwrap(await this.env.SUBSCRIPTION.getByName(id).declare(id, spec.name, subscriptionSpec, secret));
        if (outcome !== "unchanged") result.subscriptions.push(`${where} ${outcome}`);
      } catch (error) {
        complete = false;
        result.errors.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // As with informers: never delete on a declaration that did not fully apply.
    if (!complete) return;
    const ids = await this.#stub(spec.name).subscriberIds();
    for (const id of ids.ok ? ids.value : []) {
      if (declared.has(id) || !id.startsWith(declaredSubscriptionId(spec.name, ""))) continue;
      if ((await this.env.SUBSCRIPTION.getByName(id).destroy(true)) === "deleted") result.subscriptions.push(`${id} removed`);
    }
  }

  /** Re-arms every informer whose alarm is missing; returns the names it re-armed. */
  async reconcile(): Promise<string[]> {
    const rearmed: string[] = [];
    for (const informer of this.#registry.list()) {
      if (await this.#stub(informer.name).ensureRunning()) rearmed.push(informer.name);
    }
    return rearmed;
  }

  /**
   * Runs `change` after every change that arrived before it has finished (failed ones included).
   * Without it, a removal awaiting an informer's destroy would let a re-declaration see the informer
   * still registered and skip it, and two identical syncs would both configure every informer.
   */
  #exclusive<T>(change: () => Promise<T>): Promise<T> {
    const run = this.#changes.then(change, change);
    this.#changes = run.catch(() => undefined);
    return run;
  }

  #stub(name: string) {
    return this.env.INFORMER.getByName(name);
  }
}
