import { ApiError, missingParam } from "@chat/platform";

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

/**
 * A topic an integration made of a third party's text (a pull request's title, a Slack channel,
 * an alert's label), fit to be one: its control characters (a title's line breaks, a tab) are
 * spaces, its runs of white space one space, and it is trimmed; the send cuts it to the topic
 * length as any topic. Text with nothing else in it is "(no topic)".
 */
export function flatTopic(text: string): string {
  const flat = text
    .replace(/[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat === "" ? "(no topic)" : flat;
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

/**
 * An integration's JSON payload, wherever the tool put it: the body (whatever its type says), or
 * the `payload` field of a multipart form, or of a urlencoded form whose body is not JSON itself
 * (GitHub's "application/x-www-form-urlencoded" content type, Slack's clients).
 */
export function decodeJsonPayload(body: Buffer | undefined, contentType: string, formPayload: string | undefined): unknown {
  if (mediaType(contentType) === "multipart/form-data") {
    if (formPayload === undefined) throw missingParam("payload");
    return parseJsonText(formPayload);
  }
  try {
    return parseJsonBody(body);
  } catch (err) {
    if (formPayload === undefined || mediaType(contentType) !== "application/x-www-form-urlencoded") throw err;
    return parseJsonText(formPayload);
  }
}

export const mediaType = (contentType: string) => contentType.split(";")[0].trim().toLowerCase();

/** Zulip's MissingHTTPEventHeaderError: an integration that reads its event type from a header, called without it. */
export const missingEventHeader = (header: string) =>
  new ApiError("MISSING_HTTP_EVENT_HEADER", `Missing the HTTP event header '${header}'`, { extra: { header } });

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
 * Typed reads of a payload's fields by dotted path (`pull_request.user.login`): the required ones
 * throw the integration's ANOMALOUS_WEBHOOK_PAYLOAD naming the field, the optional ones give
 * undefined for a missing or null field (and still refuse one of another type).
 */
export function payloadReader(webhookName: string) {
  const wrong = (path: string, what: string) => anomalousPayload(webhookName, `'${path}' is missing or not ${what}.`);
  const at = (root: unknown, path: string): unknown =>
    path.split(".").reduce<unknown>((v, key) => (isObject(v) && Object.hasOwn(v, key) ? v[key] : undefined), root);
  const optional =
    <T>(check: (v: unknown) => v is T, what: string) =>
    (root: unknown, path: string): T | undefined => {
      const v = at(root, path);
      if (v === undefined || v === null) return undefined;
      if (!check(v)) throw wrong(path, what);
      return v;
    };
  const required =
    <T>(check: (v: unknown) => v is T, what: string) =>
    (root: unknown, path: string): T => {
      const v = optional(check, what)(root, path);
      if (v === undefined) throw wrong(path, what);
      return v;
    };
  const isString = (v: unknown): v is string => typeof v === "string";
  const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
  const isBoolean = (v: unknown): v is boolean => typeof v === "boolean";
  const isList = (v: unknown): v is unknown[] => Array.isArray(v);
  return {
    str: required(isString, "a string"),
    optStr: optional(isString, "a string"),
    num: required(isNumber, "a number"),
    optNum: optional(isNumber, "a number"),
    optBool: optional(isBoolean, "a boolean"),
    obj: required(isObject, "an object"),
    optObj: optional(isObject, "an object"),
    optList: optional(isList, "a list"),
  };
}

/**
 * Whether an event type passes an integration URL's filters: some `only_events` pattern matches
 * it (when given) and no `exclude_events` pattern does. Patterns are shell-style, as Zulip's
 * fnmatch: `*`, `?`, `[seq]`, `[!seq]`.
 */
export function eventWanted(eventType: string, only: readonly string[] | undefined, exclude: readonly string[] | undefined): boolean {
  if (only !== undefined && !only.some((pattern) => globMatches(pattern, eventType))) return false;
  return !(exclude ?? []).some((pattern) => globMatches(pattern, eventType));
}

/** One step of a shell-style pattern: any run of characters, any one character, or one from a set. */
type GlobStep = { any: "run" } | { any: "one" } | { test: (c: string) => boolean };

function globSteps(pattern: string): GlobStep[] {
  const steps: GlobStep[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const close = c === "[" ? pattern.indexOf("]", i + 2) : -1;
    if (c === "*") {
      // A run of stars is one star.
      const last = steps.at(-1);
      if (!(last && "any" in last && last.any === "run")) steps.push({ any: "run" });
    } else if (c === "?") steps.push({ any: "one" });
    else if (close > 0) {
      const body = pattern.slice(i + 1, close);
      const negated = body.startsWith("!");
      let set: RegExp | null;
      try {
        // One character against one class: no backtracking whatever the class says.
        set = new RegExp(`^[${negated ? "^" : ""}${(negated ? body.slice(1) : body).replace(/[\\\]^]/g, "\\$&")}]$`);
      } catch {
        set = null; // a range out of order (`[z-a]`) matches nothing
      }
      steps.push({ test: (x) => set !== null && set.test(x) });
      i = close;
    } else steps.push({ test: (x) => x === c });
  }
  return steps;
}

/**
 * Whether `text` matches a shell-style pattern. Walked step by step over the set of positions
 * the text can be at, so it takes pattern length times text length: a regular expression of the
 * pattern backtracks exponentially on a run of wildcards (`**?*?*?...x`), and the pattern is in
 * the integration URL, the caller's to choose.
 */
function globMatches(pattern: string, text: string): boolean {
  let at = new Array<boolean>(text.length + 1).fill(false);
  at[0] = true;
  for (const step of globSteps(pattern)) {
    const next = new Array<boolean>(text.length + 1).fill(false);
    if ("any" in step && step.any === "run") {
      // From the first position reached, every later one is.
      for (let p = 0, reached = false; p <= text.length; p++) next[p] = reached ||= at[p];
    } else {
      for (let p = 0; p < text.length; p++) if (at[p] && ("any" in step || step.test(text[p]))) next[p + 1] = true;
    }
    at = next;
  }
  return at[text.length];
}
