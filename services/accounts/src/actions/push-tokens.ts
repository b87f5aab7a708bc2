import { badRequest, withTx, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { exceeds } from "../lib/validate";
import { deleteToken, insertToken, PUSH_KIND } from "../store/push-tokens";

const MAX_TOKEN_LENGTH = 4096;

export function checkHuman(who: Identity): void {
  if (who.isBot) throw badRequest("This endpoint does not accept bot requests.");
}

function validateToken(token: string, kind: number): void {
  if (token === "" || exceeds(token, MAX_TOKEN_LENGTH)) throw badRequest("Empty or invalid length token");
  if (kind === PUSH_KIND.apns && !decodesAsBase64(token)) throw badRequest("Invalid APNS token");
}

const BASE64_CHAR = /[A-Za-z0-9+/]/;

/**
 * Zulip only checks that an APNs token decodes with Python's lenient `base64.b64decode`: ASCII,
 * characters outside the alphabet skipped, decoding stops at a complete padding, and the data
 * characters must not end part-way through a quad. Hex tokens (what iOS gives) always pass.
 */
function decodesAsBase64(token: string): boolean {
  if (!/^[\x00-\x7f]*$/.test(token)) return false;
  let quadPos = 0;
  let pads = 0;
  for (const ch of token) {
    if (ch === "=") {
      if (quadPos >= 2 && quadPos + ++pads >= 4) return true;
    } else if (BASE64_CHAR.test(ch)) {
      pads = 0;
      quadPos = (quadPos + 1) % 4;
    }
  }
  return quadPos === 0;
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
