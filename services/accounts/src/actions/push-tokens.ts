import { badRequest, withTx, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { exceeds } from "../lib/validate";
import { deleteToken, insertToken, PUSH_KIND } from "../store/push-tokens";

const MAX_TOKEN_LENGTH = 4096;

function checkHuman(who: Identity): void {
  if (who.isBot) throw badRequest("This endpoint does not accept bot requests.");
}

function validateToken(token: string, kind: number): void {
  if (token === "" || exceeds(token, MAX_TOKEN_LENGTH)) throw badRequest("Empty or invalid length token");
  if (kind === PUSH_KIND.apns && !/^(?:[0-9A-Fa-f]{2})+$/.test(token)) throw badRequest("Invalid APNS token");
}

/** Registering the same token again is a no-op success (Zulip ignores the conflict). */
export async function doAddPushToken(deps: AccountsDeps, who: Identity, kind: number, token: string, appId: string | null): Promise<void> {
  checkHuman(who);
  validateToken(token, kind);
  if (kind === PUSH_KIND.apns && !/^[.a-zA-Z0-9-]+$/.test(appId ?? "")) throw badRequest("Invalid app ID");
  await withTx(deps.pool, (tx) => insertToken(tx, who.realmId, who.userId, kind, token, appId, deps.clock.now()));
}

/** Only the caller's own tokens can be removed; anyone else's is "Token does not exist". */
export async function doRemovePushToken(deps: AccountsDeps, who: Identity, kind: number, token: string): Promise<void> {
  checkHuman(who);
  validateToken(token, kind);
  const removed = await withTx(deps.pool, (tx) => deleteToken(tx, who.realmId, who.userId, kind, token));
  if (!removed) throw badRequest("Token does not exist");
}
