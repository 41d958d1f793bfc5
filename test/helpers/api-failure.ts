/** The EdgeInformerApiError a client call rejects with (a test failure if it resolves or throws anything else). */
import { EdgeInformerApiError } from "../../src/client/index.ts";

export async function apiFailure(promise: Promise<unknown>): Promise<EdgeInformerApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof EdgeInformerApiError)) throw new Error(`expected an API error, got ${String(error)}`);
  return error;
}
