import { badRequest } from "@chat/platform";
import { checkStreamName } from "./normalize";

/**
 * A digit then a fraction or an exponent. Where `to` decoded to numbers only, this in its text
 * is a number Python's json (so Zulip) reads as a float (`1.0`, `[6e0]`), which is not an id.
 */
const FLOAT_SYNTAX = /[0-9][.eE]/;

/**
 * `to` of a channel message: an id, a name, a JSON-quoted name or a one-element JSON list. A
 * name is trimmed and checked as a channel name first (Zulip's validate_stream_name_with_pm_notification).
 */
export function extractStreamIndicator(raw: string): string | number {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return checkStreamName(raw);
  }
  if (Array.isArray(data)) {
    if (data.length !== 1) throw badRequest("Expected exactly one channel");
    data = data[0];
  }
  if (typeof data === "string") return checkStreamName(data);
  if (typeof data === "number" && Number.isSafeInteger(data) && !FLOAT_SYNTAX.test(raw)) return data;
  throw badRequest("Invalid data type for channel");
}

/** `to` of a direct message: JSON list of ids or emails, or comma-separated emails. Duplicates dropped. */
export function extractPrivateRecipients(raw: string): number[] | string[] {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    data = raw;
  }
  if (typeof data === "string") data = data.split(",");
  if (!Array.isArray(data)) throw badRequest("Invalid data type for recipients");
  if (data.length === 0) return [];
  if (typeof data[0] === "string") {
    if (!data.every((x) => typeof x === "string")) throw badRequest("Recipient lists may contain emails or user IDs, but not both.");
    return [...new Set((data as string[]).map((e) => e.trim()).filter((e) => e !== ""))];
  }
  if (typeof data[0] !== "number") throw badRequest("Invalid data type for recipients");
  if (!data.every((x) => typeof x === "number")) throw badRequest("Recipient lists may contain emails or user IDs, but not both.");
  if (!data.every((x) => Number.isSafeInteger(x)) || FLOAT_SYNTAX.test(raw)) throw badRequest("Invalid data type for recipients");
  return [...new Set(data as number[])];
}

/** `direct`/`private` -> private; `stream`/`channel` -> stream. */
export function messageKind(type: string): "stream" | "private" {
  if (type === "stream" || type === "channel") return "stream";
  if (type === "private" || type === "direct") return "private";
  throw badRequest("Invalid message type");
}
