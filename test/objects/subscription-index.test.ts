/**
 * The factory's index of subscriptions (delivery/subscription-registry.ts): a lookup answers which
 * informer an id follows, or `absent` for an unknown id without addressing its object; subscriptions
 * created before the index existed are copied in from their informers once, on the first lookup.
 */
import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";
import { subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { newCluster } from "../helpers/informer.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";

const subscriptionIds = async () => (await listDurableObjectIds(env.SUBSCRIPTION)).map((id) => id.toString());

describe("the factory's subscription index", () => {
  it("finds a subscription made before the index by asking its informer once, and answers absent for an unknown id without addressing it", async () => {
    // A factory of its own, so its index starts empty and incomplete, as after an upgrade.
    const factory = env.FACTORY.getByName(`factory-${crypto.randomUUID().slice(0, 8)}`);
    const cluster = await newCluster();
    const name = `idx-${crypto.randomUUID().slice(0, 8)}`;
    unwrap(await factory.put(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3 }, name), "api", cluster.url));
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const id = `sub_${crypto.randomUUID().replace(/-/g, "")}`;
    // Created straight on the object, as a release without the index did.
    unwrap(await env.SUBSCRIPTION.getByName(id).create(id, { cluster: "default", name }, subscriptionSpecSchema.parse({ url: hook.url })));
    expect(await factory.subscription(id)).toEqual({ cluster: "default", name });

    const unknown = `sub_${crypto.randomUUID().replace(/-/g, "")}`;
    expect(await factory.subscription(unknown)).toBe("absent");
    expect(await subscriptionIds()).not.toContain(env.SUBSCRIPTION.idFromName(unknown).toString());

    await factory.indexSubscription(unknown, { cluster: "default", name });
    expect(await factory.subscription(unknown)).toEqual({ cluster: "default", name });
    await factory.unindexSubscription(unknown);
    expect(await factory.subscription(unknown)).toBe("absent");

    // Deleting the informer deletes its subscriptions, and their index entries with them.
    unwrap(await factory.remove({ cluster: "default", name }));
    expect(await factory.subscription(id)).toBe("absent");
  });
});
