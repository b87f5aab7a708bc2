import { ApiError } from "@chat/platform";

/**
 * What integrations share: reading a third party's JSON, Zulip's errors for a payload that
 * cannot be read or an event not handled, and the event type filters of integration URLs.
 */

/** One message an integration makes of a payload. */
export interface WebhookMessage {
  /** The integration's own topic (an integration URL's `topic` replaces it). */
  topic: string;
  content: string;
  /** What `only_events` / `exclude_events` match, for integrations with event types. */
  eventType?: string;
}

export const invalidJson = () => new ApiError("INVALID_JSON", "Malformed JSON");

/** Zulip's AnomalousWebhookPayloadError, with what was wrong. */
export const anomalousPayload = (webhookName: string, reason: string) =>
  new ApiError("ANOMALOUS_WEBHOOK_PAYLOAD", `Unable to parse request: Did ${webhookName} generate this event? ${reason}`);

/** Zulip's UnsupportedWebhookEventTypeError: a 200, so that the sender does not retry or give up on the URL. */
export const unsupportedEventType = (webhookName: string, eventType: string) =>
  new ApiError("UNSUPPORTED_WEBHOOK_EVENT_TYPE", `The '${eventType}' event isn't currently supported by the ${webhookName} webhook; ignoring`);

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A body that must be JSON text whatever its Content-Type says (Zulip's JsonBodyPayload). */
export function parseJsonBody(body: Buffer | undefined): unknown {
  if (body === undefined) throw invalidJson();
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalidJson();
  }
  return parseJsonText(text);
}

export function parseJsonText(text: string): unknown {
  // Deeper nesting than Zulip's parser (orjson) takes would overflow the stack where it is printed.
  if (nestingOver(text, MAX_JSON_DEPTH)) throw invalidJson();
  try {
    return JSON.parse(text);
  } catch {
    throw invalidJson();
  }
}

const MAX_JSON_DEPTH = 1024;

/** Whether arrays and objects nest deeper than `limit` in JSON text (brackets inside strings aside). */
function nestingOver(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Whether an event type passes an integration URL's filters: some `only_events` pattern matches
 * it (when given) and no `exclude_events` pattern does. Patterns are shell-style, as Zulip's
 * fnmatch: `*`, `?`, `[seq]`, `[!seq]`.
 */
export function eventWanted(eventType: string, only: readonly string[] | undefined, exclude: readonly string[] | undefined): boolean {
  if (only !== undefined && !only.some((pattern) => globMatches(pattern, eventType))) return false;
  return !(exclude ?? []).some((pattern) => globMatches(pattern, eventType));
}

function globMatches(pattern: string, text: string): boolean {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const close = c === "[" ? pattern.indexOf("]", i + 2) : -1;
    if (c === "*") source += "[\\s\\S]*";
    else if (c === "?") source += "[\\s\\S]";
    else if (close > 0) {
      const body = pattern.slice(i + 1, close);
      const negated = body.startsWith("!");
      source += `[${negated ? "^" : ""}${(negated ? body.slice(1) : body).replace(/[\\\]^]/g, "\\$&")}]`;
      i = close;
    } else source += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`).test(text);
}
