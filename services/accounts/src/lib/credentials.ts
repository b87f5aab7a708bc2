import { createCipheriv, createDecipheriv, createHash, randomBytes, randomInt, scrypt, timingSafeEqual } from "node:crypto";

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A new API key: 32 alphanumerics (Zulip's format), uniformly drawn. */
export function generateApiKey(): string {
  let key = "";
  for (let i = 0; i < 32; i++) key += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return key;
}

export const hasApiKeyFormat = (key: string) => /^[A-Za-z0-9]{32}$/.test(key);

/** API keys carry 190 bits of entropy, so a fast hash is enough (no salt or stretching needed). */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** A random url-safe token (invitation links). */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString("base64url");
}

function scryptAsync(password: string, salt: Buffer, cost: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 32, { N: cost, r: 8, p: 1, maxmem: 256 * cost * 8 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Zulip's minimum password length (register's `password_min_length`). */
export const PASSWORD_MIN_LENGTH = 6;

/** Whether a new password is long enough (in characters, as Zulip counts them). */
export function longEnoughPassword(password: string): boolean {
  return [...password].length >= PASSWORD_MIN_LENGTH;
}

/** Passwords are low-entropy: slow, salted scrypt. Format `scrypt$N$salt$hash` (base64). */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, cost);
  return `scrypt$${cost}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !n || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = await scryptAsync(password, Buffer.from(salt, "base64"), Number(n));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Spends the same time as a real check, so a missing account cannot be told from a wrong password. */
export async function dummyPasswordCheck(password: string, cost: number): Promise<void> {
  await scryptAsync(password, Buffer.alloc(16), cost);
}

/**
 * An API key sealed under the owner's password, for POST /fetch_api_key to hand the same key to
 * every login with that password: AES-256-GCM under scrypt(password, a salt of its own) at the
 * password's cost. Format `v1$N$salt$iv$ciphertext+tag` (base64). Opening it takes the password,
 * so a copy of the table is no easier to turn into keys than the password hashes into passwords.
 */
export async function sealApiKey(key: string, password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", await scryptAsync(password, salt, cost), iv);
  const sealed = Buffer.concat([cipher.update(key, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return ["v1", cost, salt.toString("base64"), iv.toString("base64"), sealed.toString("base64")].join("$");
}

/** The key sealed by sealApiKey, or null when this password does not open it (or it is malformed). */
export async function unsealApiKey(sealed: string, password: string): Promise<string | null> {
  const [version, n, salt, iv, body] = sealed.split("$");
  if (version !== "v1" || !n || !salt || !iv || !body) return null;
  const bytes = Buffer.from(body, "base64");
  if (bytes.length <= 16) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", await scryptAsync(password, Buffer.from(salt, "base64"), Number(n)), Buffer.from(iv, "base64"));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    const key = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8");
    return hasApiKeyFormat(key) ? key : null;
  } catch {
    return null;
  }
}
