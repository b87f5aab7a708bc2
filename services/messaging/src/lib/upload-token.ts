import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Temporary URLs of uploads (Zulip's `GET /user_uploads/{realm_id_str}/{filename}` below
 * `/api/v1`): a token naming the file and when it stops working, signed with a key derived from
 * the deployment's internal secret, so any messaging replica can check what another issued.
 */

/** How long a temporary URL works, as in Zulip. */
export const TEMPORARY_URL_SECONDS = 60;

const keyOf = (secret: string) => createHmac("sha256", secret).update("chat upload temporary url").digest();

const signature = (secret: string, body: string) => createHmac("sha256", keyOf(secret)).update(body).digest("base64url");

/** A token for `pathId` that works until `now` plus a minute. */
export function signUploadToken(secret: string, pathId: string, now: Date): string {
  const body = Buffer.from(JSON.stringify([pathId, Math.floor(now.getTime() / 1000) + TEMPORARY_URL_SECONDS])).toString("base64url");
  return `${body}.${signature(secret, body)}`;
}

/** The path id a token names, or null when it is not ours, altered, or expired. */
export function readUploadToken(secret: string, token: string, now: Date): string | null {
  const [body, sig, ...rest] = token.split(".");
  if (!body || !sig || rest.length) return null;
  const expected = Buffer.from(signature(secret, body));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(decoded) || typeof decoded[0] !== "string" || typeof decoded[1] !== "number") return null;
  return decoded[1] * 1000 > now.getTime() ? decoded[0] : null;
}
