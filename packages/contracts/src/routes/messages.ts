import { z } from "zod";
import { p } from "../params";
import { route, success, empty } from "../route";
import { MessageReaction } from "./reactions";

export const DisplayRecipientUser = z.strictObject({
  id: z.number().int(),
  email: z.string(),
  full_name: z.string(),
  is_mirror_dummy: z.boolean(),
});

/**
 * One edit of a message as Zulip stores it (`edit_history` of a message object, newest first):
 * who and when, and the fields that edit changed. `prev_rendered_content_version` is still
 * there at feature level 267 (Zulip dropped it at 284).
 */
export const EditHistoryEntry = z.strictObject({
  user_id: z.number().int().nullable(),
  timestamp: z.number().int(),
  prev_content: z.string().optional(),
  prev_rendered_content: z.string().optional(),
  prev_rendered_content_version: z.number().int().optional(),
  prev_topic: z.string().optional(),
  topic: z.string().optional(),
  prev_stream: z.number().int().optional(),
  stream: z.number().int().optional(),
});
export type EditHistoryEntry = z.infer<typeof EditHistoryEntry>;

/** Zulip's message object (GET /messages, message events); `flags` only where a user's view is given. */
export const MessageObject = z.strictObject({
  id: z.number().int(),
  sender_id: z.number().int(),
  content: z.string(),
  content_type: z.string(),
  recipient_id: z.number().int(),
  timestamp: z.number().int(),
  client: z.string(),
  subject: z.string(),
  topic_links: z.array(z.strictObject({ text: z.string(), url: z.string() })),
  is_me_message: z.boolean(),
  reactions: z.array(MessageReaction),
  submessages: z.array(z.unknown()),
  sender_full_name: z.string(),
  sender_email: z.string(),
  sender_realm_str: z.string(),
  display_recipient: z.union([z.string(), z.array(DisplayRecipientUser)]),
  type: z.enum(["stream", "private"]),
  stream_id: z.number().int().optional(),
  avatar_url: z.string().nullable(),
  flags: z.array(z.string()).optional(),
  last_edit_timestamp: z.number().int().optional(),
  /** Present once the message was edited (the organization shows edit history). */
  edit_history: z.array(EditHistoryEntry).optional(),
  match_content: z.string().optional(),
  match_subject: z.string().optional(),
});
export type MessageObject = z.infer<typeof MessageObject>;

/** Parameters of POST /messages (also the scheduler's internal send). */
export const sendMessageParams = {
  type: p.str().required(),
  to: p.str().required(),
  content: p.str().required(),
  topic: p.str().alias("subject"),
  queue_id: p.str(),
  local_id: p.str(),
  read_by_sender: p.bool(),
};

const SendResponse = success({
  id: z.number().int(),
  automatic_new_visibility_policy: z.number().int().optional(),
});

export const SendMessage = route({
  method: "POST",
  path: "/messages",
  service: "messaging",
  auth: "user",
  params: sendMessageParams,
  response: SendResponse,
  // The only thing an incoming-webhook bot's key is good for, as in Zulip.
  allowIncomingWebhooks: true,
});

/**
 * Service-to-service send (the scheduler's delivery). The identity headers are the sender. A
 * repeated `idempotency_key` of the same sender returns the first message's id and sends nothing.
 */
export const InternalSendMessage = route({
  method: "POST",
  path: "/internal/messages/send",
  service: "messaging",
  auth: "user",
  params: { ...sendMessageParams, idempotency_key: p.str().required() },
  response: SendResponse,
});

/**
 * Service-to-service: the id of the message a sender's internal send with `idempotency_key`
 * became, or null when no send with that key was accepted. A send of that key still in progress
 * is waited for. The scheduler asks before it lets a user change or delete a scheduled message
 * whose delivery may have happened without being recorded (a crash between the send and its
 * own commit).
 */
export const InternalSentMessage = route({
  method: "GET",
  path: "/internal/messages/sent",
  service: "messaging",
  auth: "internal",
  params: { realm_id: p.int().required(), sender_id: p.int().required(), idempotency_key: p.str().required() },
  response: success({ id: z.number().int().nullable() }),
});

/**
 * A narrow operand. Which of these an operator takes (a string; a string or an id; a string or a
 * list of ids), and a `negated` that is not a boolean, narrowTermProblem tells, in Zulip's words
 * for the operator (so both are open here).
 */
const NarrowOperand = z.unknown().meta({
  description: "A string; an integer id (channel, stream, id, sender, dm-including, group-pm-with); or a list of user ids (dm, pm-with).",
});

/** A narrow term: `{operator, operand, negated?}` or the legacy `[operator, operand]` pair. */
export const NarrowTerm = z.union([
  z.object({ operator: z.string(), operand: NarrowOperand, negated: z.unknown().meta({ description: "A boolean." }).optional() }),
  z.tuple([z.string(), NarrowOperand]),
]);
export type NarrowTerm = z.infer<typeof NarrowTerm>;

/**
 * Operators that take a string (a channel's name, a user's email, or a message id's digits) or
 * a JSON integer (an id); operators that take comma-separated emails or a list of user ids.
 */
const NAME_OR_ID = new Set(["channel", "stream", "id", "sender", "group-pm-with", "dm-including"]);
const EMAILS_OR_IDS = new Set(["dm", "pm-with"]);

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

/** Why the operand is not of the type its operator takes, in Zulip's validator's words; null if it is. */
function operandProblem(operator: string, operand: unknown): string | null {
  const where = 'elem["operand"]';
  if (NAME_OR_ID.has(operator)) return typeof operand === "string" || isInt(operand) ? null : `${where} is not a string or integer`;
  if (EMAILS_OR_IDS.has(operator)) {
    if (typeof operand === "string") return null;
    if (!Array.isArray(operand)) return `${where} is not a string or an integer list`;
    const at = operand.findIndex((item) => !isInt(item));
    return at === -1 ? null : `${where}[${at}] is not an integer`;
  }
  if (typeof operand !== "string") return `${where} is not a string`;
  if (operator === "search" && operand.trim() === "") return `${where} cannot be blank.`;
  return null;
}

/**
 * Why a narrow term is not of its operator's type, in the words Zulip's validator has for the
 * `{operator, operand, negated}` form; null if it is. A legacy pair is two strings only (Zulip
 * calls anything else a bad value of the whole parameter, which the caller says); its string
 * operand is then held to the same rules.
 */
export function narrowTermProblem(term: NarrowTerm): string | null {
  if (Array.isArray(term)) return typeof term[1] === "string" ? operandProblem(term[0], term[1]) : 'elem["operand"] is not a string';
  const problem = operandProblem(term.operator, term.operand);
  if (problem !== null) return problem;
  return term.negated === undefined || typeof term.negated === "boolean" ? null : 'elem["negated"] is not a boolean';
}

/**
 * The `narrow` parameter of every endpoint that takes one. Its `{operator, operand, negated}`
 * terms are checked here, in order, up to the first that fails, so that an integer written as a
 * float (`5.0`, which Python's json, so Zulip, reads as a float and refuses where an id is due)
 * is refused too: JSON.parse reads it as 5, and only the parameter parser's second look at such
 * text, with the number made fractional, shows it. A legacy pair that fails ends the walk
 * unreported: the service refuses it as a bad value of the whole narrow, as Zulip does.
 */
export const Narrow = z.array(NarrowTerm).superRefine((terms, ctx) => {
  for (const [i, term] of terms.entries()) {
    const problem = narrowTermProblem(term);
    if (problem === null) continue;
    if (!Array.isArray(term)) ctx.addIssue({ code: "custom", path: [i], message: problem, input: term });
    return;
  }
});

const NonNegative = z.number().int().min(0);

export const GetMessages = route({
  method: "GET",
  path: "/messages",
  service: "messaging",
  auth: "user",
  params: {
    anchor: p.str(),
    include_anchor: p.bool().default(true),
    num_before: p.int(NonNegative).default(0),
    num_after: p.int(NonNegative).default(0),
    narrow: p.json(Narrow).default([]),
    client_gravatar: p.bool().default(true),
    apply_markdown: p.bool().default(true),
    use_first_unread_anchor: p.bool().default(false),
    message_ids: p.json(z.array(z.number().int())),
  },
  response: success({
    messages: z.array(MessageObject),
    /**
     * An integer; "newest" answers Zulip's 10000000000000000, beyond the safe-integer range
     * that zod's int() accepts, so that one value is allowed by name.
     */
    anchor: z.union([z.number().int(), z.literal(10_000_000_000_000_000)]).optional(),
    found_anchor: z.boolean().optional(),
    found_oldest: z.boolean().optional(),
    found_newest: z.boolean().optional(),
    history_limited: z.boolean().optional(),
  }),
});

export const GetMessage = route({
  method: "GET",
  path: "/messages/{message_id}",
  service: "messaging",
  auth: "user",
  params: { message_id: p.int().path(), apply_markdown: p.bool().default(true) },
  // Search highlights belong to GET /messages only; Zulip's single-message object has none.
  response: success({ message: MessageObject.omit({ match_content: true, match_subject: true }), raw_content: z.string() }),
});

export const DeleteMessage = route({
  method: "DELETE",
  path: "/messages/{message_id}",
  service: "messaging",
  auth: "user",
  params: { message_id: p.int().path() },
  response: empty,
});

export const PropagateMode = z.enum(["change_one", "change_later", "change_all"]);

/**
 * PATCH /messages/{message_id}: a content edit, a topic edit or a move to another channel, for
 * the one message or (propagate_mode) the later ones or all of its topic. Zulip 9.0's view.
 */
export const UpdateMessage = route({
  method: "PATCH",
  path: "/messages/{message_id}",
  service: "messaging",
  auth: "user",
  params: {
    message_id: p.int().path(),
    content: p.str(),
    topic: p.str().alias("subject"),
    stream_id: p.int(),
    propagate_mode: p.str(PropagateMode).default("change_one"),
    send_notification_to_old_thread: p.bool().default(false),
    send_notification_to_new_thread: p.bool().default(true),
  },
  response: empty,
});

/** One state of a message in GET /messages/{id}/history: its content and topic after that edit. */
export const MessageHistorySnapshot = z.strictObject({
  user_id: z.number().int().nullable(),
  timestamp: z.number().int(),
  topic: z.string(),
  content: z.string(),
  rendered_content: z.string(),
  prev_topic: z.string().optional(),
  prev_content: z.string().optional(),
  prev_rendered_content: z.string().optional(),
  content_html_diff: z.string().optional(),
  prev_stream: z.number().int().optional(),
  stream: z.number().int().optional(),
});

/** GET /messages/{message_id}/history: the original message first, then each edit. */
export const GetMessageHistory = route({
  method: "GET",
  path: "/messages/{message_id}/history",
  service: "messaging",
  auth: "user",
  params: { message_id: p.int().path() },
  response: success({ message_history: z.array(MessageHistorySnapshot) }),
});

export const RenderMessage = route({
  method: "POST",
  path: "/messages/render",
  service: "messaging",
  auth: "user",
  params: { content: p.str().required() },
  response: success({ rendered: z.string() }),
});
