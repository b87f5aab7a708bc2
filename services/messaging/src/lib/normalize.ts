import { badRequest } from "@chat/platform";
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH, MAX_STREAM_NAME_LENGTH, MAX_STREAM_DESCRIPTION_LENGTH } from "@chat/contracts";

/** Cuts `text` to `max` characters, ending with `suffix`, as Zulip does for over-long input. */
export function truncate(text: string, max: number, suffix: string): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return chars.slice(0, max - suffix.length).join("") + suffix;
}

/** Message content: trimmed, not empty, no NUL, truncated to the maximum length. */
export function normalizeBody(content: string): string {
  const body = content.replace(/\s+$/u, "").replace(/^\n+/, "");
  if (body.length === 0) throw badRequest("Message must not be empty");
  if (body.includes("\u0000")) throw badRequest("Message must not contain null bytes");
  return truncate(body, MAX_MESSAGE_LENGTH, "\n[message truncated]");
}

// Control characters (Unicode Cc), which Zulip refuses in topics and channel names.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f]/u;

/** A channel message's topic: present, trimmed, printable, truncated to 60 with "...". */
export function normalizeTopic(topic: string | undefined): string {
  if (topic === undefined) throw badRequest("Missing topic");
  const trimmed = topic.trim();
  if (trimmed === "") throw badRequest("Topic can't be empty!");
  const bad = trimmed.search(UNPRINTABLE);
  if (bad >= 0) throw badRequest(`Invalid character in topic, at position ${bad + 1}!`);
  return truncate(trimmed, MAX_TOPIC_LENGTH, "...");
}

export function checkStreamName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Channel name can't be empty.");
  if (Array.from(name).length > MAX_STREAM_NAME_LENGTH) {
    throw badRequest(`Channel name too long (limit: ${MAX_STREAM_NAME_LENGTH} characters).`);
  }
  const bad = name.search(UNPRINTABLE);
  if (bad >= 0) throw badRequest(`Invalid character in channel name, at position ${bad + 1}.`);
  return name;
}

export function checkStreamDescription(raw: string): string {
  const description = raw.replace(/\n/g, " ").trim();
  if (Array.from(description).length > MAX_STREAM_DESCRIPTION_LENGTH) {
    throw badRequest(`Channel description too long (limit: ${MAX_STREAM_DESCRIPTION_LENGTH} characters).`);
  }
  return description;
}
