import { badRequest } from "@chat/platform";
import { checkStreamName } from "./normalize";

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
  if (typeof data === "number" && Number.isSafeInteger(data)) return data;
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
  if (!data.every((x) => Number.isSafeInteger(x))) throw badRequest("Invalid data type for recipients");
  return [...new Set(data as number[])];
}

/** `direct`/`private` -> private; `stream`/`channel` -> stream. */
export function messageKind(type: string): "stream" | "private" {
  if (type === "stream" || type === "channel") return "stream";
  if (type === "private" || type === "direct") return "private";
  throw badRequest("Invalid message type");
}
