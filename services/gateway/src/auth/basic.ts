import { unauthorized } from "@chat/platform";

export interface BasicCredentials {
  email: string;
  apiKey: string;
}

export const NOT_LOGGED_IN = "Not logged in: API authentication or user session required";
export const REQUIRES_BASIC = "This endpoint requires HTTP basic authentication.";
export const INVALID_BASIC_HEADER = "Invalid authorization header for basic auth";
export const MALFORMED_API_KEY = "Malformed API key";
export const INVALID_API_KEY = "Invalid API key";

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
export const API_KEY_FORMAT = /^[A-Za-z0-9]{32}$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads `Authorization: Basic base64(email:api_key)` with Zulip's answers for each way it can be
 * wrong. Pure: the key's format is checked here so malformed keys never reach accounts.
 */
export function parseBasicAuth(header: string | undefined): BasicCredentials {
  if (header === undefined || header.trim() === "") throw unauthorized(NOT_LOGGED_IN);
  // Zulip splits the header into exactly two words before looking at the scheme, so a header
  // of one or three words is unreadable whatever its scheme.
  const words = header.trim().split(/\s+/);
  if (words.length !== 2) throw unauthorized(INVALID_BASIC_HEADER);
  const [scheme, encoded] = words;
  // Zulip answers 400 BAD_REQUEST here; our spec (section 5) refuses every request without valid
  // credentials with UNAUTHORIZED, so this is a 401 like the other Basic-auth failures, with
  // Zulip's words.
  if (scheme.toLowerCase() !== "basic") throw unauthorized(REQUIRES_BASIC);
  if (!BASE64.test(encoded)) throw unauthorized(INVALID_BASIC_HEADER);
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(encoded, "base64"));
  } catch {
    throw unauthorized(INVALID_BASIC_HEADER);
  }
  // Exactly one separator: an email or key holding a colon cannot be told apart.
  const parts = decoded.split(":");
  if (parts.length !== 2) throw unauthorized(INVALID_BASIC_HEADER);
  const email = parts[0].trim();
  const apiKey = parts[1].trim();
  if (!API_KEY_FORMAT.test(apiKey)) throw unauthorized(MALFORMED_API_KEY);
  return { email, apiKey };
}
