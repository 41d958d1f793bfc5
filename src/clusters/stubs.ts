/** The Durable Object of an informer, reached by its address (clusters/cluster.ts `informerObjectName`). */
import type { Env } from "../env.ts";
import { type InformerAddress, informerObjectName } from "./cluster.ts";

export function informerStub(env: Pick<Env, "INFORMER">, address: InformerAddress) {
  return env.INFORMER.getByName(informerObjectName(address));
}
