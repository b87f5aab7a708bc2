import { badRequest } from "@chat/platform";

/**
 * The narrow a queue may be registered with: only the operators that can be decided from one
 * message event alone (channel, topic, sender, is), as Zulip's event-queue narrows.
 */
export interface NarrowTerm {
  operator: "channel" | "topic" | "sender" | "is";
  operand: string;
  negated: boolean;
}

const OPERATORS: Record<string, NarrowTerm["operator"]> = {
  channel: "channel",
  stream: "channel",
  topic: "topic",
  sender: "sender",
  is: "is",
};

const IS_OPERANDS = new Set(["dm", "private", "starred", "unread", "mentioned", "alerted", "resolved"]);

/** Validates a register narrow; unsupported operators answer as Zulip does. */
export function parseNarrow(raw: ReadonlyArray<unknown>): NarrowTerm[] {
  return raw.map((term) => {
    const [operator, operand, negated] = Array.isArray(term)
      ? [String(term[0]), String(term[1]), false]
      : [String((term as any).operator), String((term as any).operand), Boolean((term as any).negated)];
    const op = OPERATORS[operator];
    if (!op) throw badRequest(`Operator ${operator} not supported.`);
    if (op === "is" && !IS_OPERANDS.has(operand)) throw badRequest(`Operand ${operand} not supported.`);
    return { operator: op, operand, negated };
  });
}

/** The parts of a message event a narrow looks at. */
export interface NarrowableMessage {
  type?: unknown;
  display_recipient?: unknown;
  subject?: unknown;
  sender_email?: unknown;
}

const MENTION_FLAGS = ["mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "wildcard_mentioned"];
const RESOLVED_PREFIX = "\u2714 ";

const lower = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : "");

function matchesTerm(term: NarrowTerm, message: NarrowableMessage, flags: readonly string[]): boolean {
  const isChannel = message.type === "stream";
  switch (term.operator) {
    case "channel":
      return isChannel && lower(message.display_recipient) === term.operand.toLowerCase();
    case "topic":
      return isChannel && lower(message.subject) === term.operand.toLowerCase();
    case "sender":
      return lower(message.sender_email) === term.operand.toLowerCase();
    case "is":
      switch (term.operand) {
        case "dm":
        case "private":
          return message.type === "private";
        case "starred":
          return flags.includes("starred");
        case "unread":
          return !flags.includes("read");
        case "mentioned":
          return MENTION_FLAGS.some((f) => flags.includes(f));
        case "alerted":
          return flags.includes("has_alert_word");
        case "resolved":
          return isChannel && typeof message.subject === "string" && message.subject.startsWith(RESOLVED_PREFIX);
      }
  }
  return false;
}

/** Whether a message (with the receiving user's flags) belongs to the narrow; all terms must hold. */
export function matchesNarrow(terms: readonly NarrowTerm[], message: NarrowableMessage, flags: readonly string[]): boolean {
  return terms.every((t) => matchesTerm(t, message, flags) !== t.negated);
}
