import { AsyncLocalStorage } from "node:async_hooks";

/** The request being handled, so outgoing internal calls carry its id without threading it by hand. */
const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/** The id of the request whose handler is running (undefined outside one). */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** Runs `fn` as part of request `requestId`; InternalClient calls made inside forward that id. */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestContext.run({ requestId }, fn);
}
