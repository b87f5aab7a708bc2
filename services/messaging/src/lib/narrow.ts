import { FLAG_BITS } from "./flags";
import { VISIBILITY } from "./visibility-policy";

/** A narrow term after its names were looked up. */
export type ResolvedTerm =
  | { kind: "stream"; streamId: number; negated: boolean; /** the viewer may read its whole history */ history?: boolean }
  | { kind: "streams"; streamIds: number[]; negated: boolean; /** the viewer may read these channels' whole history */ history?: boolean }
  | { kind: "topic"; topic: string; negated: boolean }
  | { kind: "sender"; userId: number; negated: boolean }
  | { kind: "dm"; recipientId: number | null; negated: boolean }
  | { kind: "dm_including"; userId: number; negated: boolean; /** only conversations of three or more */ groupOnly?: boolean }
  | { kind: "is"; what: "dm" | "starred" | "unread" | "mentioned" | "alerted" | "resolved" | "followed"; negated: boolean }
  | { kind: "id"; id: number; negated: boolean }
  | { kind: "search"; text: string; negated: boolean }
  | { kind: "has"; what: "link" | "image" | "attachment" | "reaction"; negated: boolean }
  | { kind: "in_home"; negated: boolean }
  | { kind: "all" };

/**
 * Words the full-text search leaves out: PostgreSQL's `english` configuration's stop words (the
 * Snowball list), which register's `stop_words` tells clients, so they can say why a search for
 * one finds nothing (Zulip sends its own search's list the same way).
 */
export const SEARCH_STOP_WORDS: readonly string[] = [
  "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves",
  "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their",
  "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was",
  "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an", "the",
  "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against",
  "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in",
  "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why",
  "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only",
  "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now",
];

/** A message read through channel history has no row of its own: it counts as read and historical. */
export const FLAGS_SQL = `COALESCE(um.flags, ${FLAG_BITS.read | FLAG_BITS.historical})`;
const MENTION_BITS = FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;
/**
 * The viewer's own row's bits, for `is:` terms: those narrows always read the viewer's rows
 * (needsOwnRows), so the row is there, and the bare column lets PostgreSQL use the partial
 * indexes on the unread, starred, private and mention bits instead of walking all of the
 * viewer's rows.
 */
const OWN_FLAGS = "um.flags";

/**
 * SQL conditions (over `m` messages and `um` the viewer's usermessages) for resolved terms.
 * Values are appended to `params`; placeholders are numbered after the ones already there.
 */
export function narrowConditions(terms: ResolvedTerm[], userId: number, params: unknown[]): string[] {
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const out: string[] = [];
  for (const t of terms) {
    if (t.kind === "all") continue;
    const cond = condition(t, userId, bind);
    out.push(t.negated ? `NOT (${cond})` : cond);
  }
  return out;
}

function condition(t: Exclude<ResolvedTerm, { kind: "all" }>, userId: number, bind: (v: unknown) => string): string {
  switch (t.kind) {
    case "stream":
      return `m.stream_id = ${bind(t.streamId)}`;
    case "streams":
      return `m.stream_id = ANY(${bind(t.streamIds)}::bigint[])`;
    case "topic":
      return `(m.stream_id IS NOT NULL AND lower(m.topic) = lower(${bind(t.topic)}))`;
    case "sender":
      return `m.sender_id = ${bind(t.userId)}`;
    case "dm":
      return t.recipientId === null ? "false" : `(m.stream_id IS NULL AND m.recipient_id = ${bind(t.recipientId)})`;
    case "dm_including":
      // The user's conversations are read once per statement, by the recipients_direct_participants
      // index (its expression spelled as it was created), not matched per message against a
      // pattern; as an array, their messages can be read by conversation (messages_recipient)
      // where the viewer received many others. A group conversation's key lists three or more
      // ids: two commas at least.
      return `(m.stream_id IS NULL AND m.recipient_id = ANY (ARRAY(SELECT r.id FROM recipients r WHERE r.user_ids_key IS NOT NULL
        AND string_to_array(r.user_ids_key, ',')::bigint[] @> ARRAY[${bind(t.userId)}::bigint]${t.groupOnly ? " AND r.user_ids_key LIKE '%,%,%'" : ""})))`;
    case "is":
      switch (t.what) {
        case "dm":
          return `(m.stream_id IS NULL AND (${OWN_FLAGS} & ${FLAG_BITS.is_private}) <> 0)`;
        case "starred":
          return `(${OWN_FLAGS} & ${FLAG_BITS.starred}) <> 0`;
        case "unread":
          return `(${OWN_FLAGS} & ${FLAG_BITS.read}) = 0`;
        case "mentioned":
          return `(${OWN_FLAGS} & ${MENTION_BITS}) <> 0`;
        case "alerted":
          return `(${OWN_FLAGS} & ${FLAG_BITS.has_alert_word}) <> 0`;
        case "resolved":
          return "(m.stream_id IS NOT NULL AND m.topic LIKE '✔ %')";
        case "followed":
          return `EXISTS (SELECT 1 FROM user_topics ut WHERE ut.user_id = ${bind(userId)} AND ut.stream_id = m.stream_id
            AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy = 3)`;
      }
      break;
    case "id":
      return `m.id = ${bind(t.id)}`;
    case "search":
      return `m.search_tsv @@ websearch_to_tsquery('english', ${bind(t.text)})`;
    case "has":
      if (t.what === "reaction") return "EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)";
      return `m.has_${t.what}`;
    case "in_home":
      return `(${mutingConditions([], userId, bind).join(" AND ")})`;
  }
  return "true";
}

/** The viewer's policy for the message's topic is one of `policies`. */
const topicPolicyIs = (user: string, policies: number[]) =>
  `EXISTS (SELECT 1 FROM user_topics ut WHERE ut.user_id = ${user} AND ut.stream_id = m.stream_id
    AND lower(ut.topic_name) = lower(m.topic) AND ut.visibility_policy IN (${policies.join(", ")}))`;

/**
 * Zulip's exclude_muting_conditions (`in:home`, and where the first unread message is looked
 * for): outside a channel narrow, messages of muted channels, except in topics the viewer
 * unmuted or follows; and messages of muted topics, unless the narrow names the topic.
 */
export function mutingConditions(terms: ResolvedTerm[], userId: number, bind: (v: unknown) => string): string[] {
  const channelNarrow = terms.some((t) => (t.kind === "stream" || t.kind === "streams") && !t.negated);
  const topicNarrow = terms.some((t) => t.kind === "topic" && !t.negated);
  if (channelNarrow && topicNarrow) return [];
  // Bound only when used: PostgreSQL refuses a statement given more values than it uses.
  const user = bind(userId);
  const out: string[] = [];
  if (!channelNarrow) {
    out.push(`(m.stream_id IS NULL OR NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = ${user}
      AND s.stream_id = m.stream_id AND s.active AND s.is_muted) OR ${topicPolicyIs(user, [VISIBILITY.unmuted, VISIBILITY.followed])})`);
  }
  if (!topicNarrow) out.push(`(m.stream_id IS NULL OR NOT ${topicPolicyIs(user, [VISIBILITY.muted])})`);
  return out;
}

/**
 * Terms that depend on the viewer's own rows: such narrows cannot read channel history. A
 * topic's being resolved or followed is not a property of the viewer's rows (Zulip's
 * ok_to_include_history keeps history for those two `is:` operands).
 */
export function needsOwnRows(terms: ResolvedTerm[]): boolean {
  return terms.some((t) => (t.kind === "is" && t.what !== "resolved" && t.what !== "followed") || t.kind === "dm" || t.kind === "dm_including");
}

export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

export interface RangePlan {
  beforeAnchor?: number;
  beforeLimit?: number;
  afterAnchor?: number;
  afterLimit?: number;
}

/** Zulip's limit_query_to_range: which ids to read on each side of the anchor. */
export function rangePlan(anchor: number, numBefore: number, numAfter: number, includeAnchor: boolean, anchoredLeft: boolean, anchoredRight: boolean): RangePlan {
  const needBefore = !anchoredLeft && numBefore > 0;
  const needAfter = !anchoredRight && numAfter > 0;
  if (needBefore && needAfter) {
    return { beforeAnchor: anchor - 1, beforeLimit: numBefore, afterAnchor: anchor, afterLimit: numAfter + 1 };
  }
  if (needBefore) {
    return { beforeAnchor: anchor - (includeAnchor ? 0 : 1), beforeLimit: numBefore + (anchoredRight ? 0 : includeAnchor ? 1 : 0) };
  }
  if (needAfter) {
    return { afterAnchor: anchor + (includeAnchor ? 0 : 1), afterLimit: numAfter + (includeAnchor ? 1 : 0) };
  }
  // Only the anchor itself may be wanted.
  if (includeAnchor && !anchoredLeft && !anchoredRight) return { afterAnchor: anchor, afterLimit: 1 };
  return {};
}

/** Zulip's post_process_limited_query: trims to the window and computes found_*. */
export function postProcess<T extends { id: number }>(rows: T[], numBefore: number, numAfter: number, anchor: number, anchoredLeft: boolean, anchoredRight: boolean) {
  let before: T[];
  let at: T[];
  let after: T[];
  if (anchoredRight) {
    numAfter = 0;
    before = rows;
    at = [];
    after = [];
  } else {
    before = rows.filter((r) => r.id < anchor);
    at = rows.filter((r) => r.id === anchor);
    after = rows.filter((r) => r.id > anchor);
  }
  if (numBefore) before = before.slice(-numBefore);
  else before = [];
  if (numAfter) after = after.slice(0, numAfter);
  else after = [];
  return {
    rows: [...before, ...at, ...after],
    foundAnchor: at.length === 1,
    foundOldest: anchoredLeft || before.length < numBefore,
    foundNewest: anchoredRight || after.length < numAfter,
  };
}
