import { withTx } from "@chat/platform";
import type { AppDeps } from "../deps";
import { lockSendKey, selectSendKey } from "../store/idempotency";

/**
 * The message a sender's idempotent send became, or null if none was accepted. The send's own
 * lock is taken first, so a send of the same key that is still in its transaction is waited for
 * rather than reported as missing.
 */
export async function getSentMessageId(deps: AppDeps, realmId: number, senderId: number, key: string): Promise<number | null> {
  return withTx(deps.pool, async (tx) => {
    await lockSendKey(tx, senderId, key);
    return (await selectSendKey(tx, realmId, senderId, key))?.messageId ?? null;
  });
}
