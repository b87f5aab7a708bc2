import type { MessageObject, NarrowTerm } from "@chat/contracts";
import { badRequest, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { FLAG_BITS } from "../lib/flags";
import { FLAGS_SQL, LARGER_THAN_MAX_MESSAGE_ID, mutingConditions, narrowConditions, needsOwnRows, postProcess, rangePlan, type ResolvedTerm } from "../lib/narrow";
import { MESSAGE_COLUMNS, toMessage, type MessageRow } from "../store/messages";
import { accessMessages, accessMessagesById } from "./message-access";
import { formatMessages } from "./message-format";
import { resolveNarrow } from "./narrow";
import { viewerOf, type Viewer } from "./streams";

export interface GetMessagesRequest {
  anchor?: string;
  includeAnchor: boolean;
  numBefore: number;
  numAfter: number;
  narrow: NarrowTerm[];
  clientGravatar: boolean;
  applyMarkdown: boolean;
  useFirstUnreadAnchor: boolean;
  messageIds?: number[];
}

export interface GetMessagesResult {
  messages: MessageObject[];
  anchor?: number;
  found_anchor?: boolean;
  found_oldest?: boolean;
  found_newest?: boolean;
  history_limited?: boolean;
}

const MAX_MESSAGES_PER_FETCH = 5000;

type Anchor = { kind: "id"; id: number } | { kind: "newest" } | { kind: "oldest" } | { kind: "first_unread" };

function parseAnchor(raw: string | undefined, useFirstUnread: boolean): Anchor {
  // The older way to ask for the first unread message wins over any anchor given (Zulip's
  // parse_anchor_value looks at it first).
  if (useFirstUnread) return { kind: "first_unread" };
  if (raw === undefined) throw badRequest("Missing 'anchor' argument.");
  if (raw === "newest" || raw === "oldest" || raw === "first_unread") return { kind: raw };
  // Any integer Python's int() reads (a sign, whitespace around, `_` between digits), held
  // between 0 and the newest-anchor value.
  const digits = /^[+-]?[0-9]+(?:_[0-9]+)*$/.test(raw.trim()) ? raw.trim().replaceAll("_", "") : null;
  if (digits === null) throw badRequest("Invalid anchor");
  return { kind: "id", id: Math.max(0, Math.min(Number(digits), LARGER_THAN_MAX_MESSAGE_ID)) };
}

/**
 * The anchor and counts checked, before the narrow names anything (Zulip checks them first, so a
 * request wrong in both is refused for them).
 */
function checkRange(req: Omit<RangeRequest, "narrow">): Anchor {
  const anchor = parseAnchor(req.anchor, req.useFirstUnreadAnchor);
  if (req.numBefore + req.numAfter > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  if (!req.includeAnchor && req.numBefore > 0 && req.numAfter > 0) throw badRequest("The anchor can only be excluded at an end of the range");
  return anchor;
}

/** GET /messages. */
export async function getMessages(deps: AppDeps, who: Identity, req: GetMessagesRequest): Promise<GetMessagesResult> {
  const viewer = viewerOf(who);
  if (req.messageIds !== undefined) {
    if (req.anchor !== undefined || req.useFirstUnreadAnchor || req.numBefore > 0 || req.numAfter > 0) {
      throw badRequest("Unsupported parameter combination: anchor, use_first_unread_anchor, num_before, num_after, message_ids");
    }
    return getByIds(deps, viewer, req, await resolveNarrow(deps, viewer, req.narrow));
  }
  const anchor = checkRange(req);
  const range = await messageRange(deps, viewer, await resolveNarrow(deps, viewer, req.narrow), anchor, req, true);
  const messages = await formatMessages(
    deps,
    viewer.realmId,
    range.rows.map((r) => ({ row: r, flags: r.umFlags, extra: r.extra })),
    { applyMarkdown: req.applyMarkdown, clientGravatar: req.clientGravatar, viewer },
  );
  return { messages, anchor: range.anchor, found_anchor: range.foundAnchor, found_oldest: range.foundOldest, found_newest: range.foundNewest, history_limited: false };
}

export type RangeRequest = Pick<GetMessagesRequest, "anchor" | "includeAnchor" | "numBefore" | "numAfter" | "narrow" | "useFirstUnreadAnchor">;

export interface MessageRange {
  /** In id order. */
  rows: Array<MessageRow & { umFlags: number; extra: Partial<MessageObject> }>;
  anchor: number;
  foundAnchor: boolean;
  foundOldest: boolean;
  foundNewest: boolean;
}

/**
 * The messages GET /messages picks for an anchor, counts and narrow, as rows (no formatting and
 * no search highlights): what POST /messages/flags/narrow changes.
 */
export async function selectMessageRange(deps: AppDeps, who: Identity, req: RangeRequest): Promise<MessageRange> {
  const viewer = viewerOf(who);
  const anchor = checkRange(req);
  return messageRange(deps, viewer, await resolveNarrow(deps, viewer, req.narrow), anchor, req, false);
}

async function messageRange(deps: AppDeps, viewer: Viewer, terms: ResolvedTerm[], anchorSpec: Anchor, req: RangeRequest, highlight: boolean): Promise<MessageRange> {
  const base = baseQuery(viewer, terms, { highlight });
  let anchor: number;
  if (anchorSpec.kind === "id") anchor = anchorSpec.id;
  else if (anchorSpec.kind === "oldest") anchor = 0;
  else if (anchorSpec.kind === "newest") anchor = LARGER_THAN_MAX_MESSAGE_ID;
  else anchor = (await firstUnread(deps, viewer, terms, base.customPlan)) ?? LARGER_THAN_MAX_MESSAGE_ID;
  const anchoredLeft = anchor === 0;
  const anchoredRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const numAfter = anchoredRight ? 0 : req.numAfter;
  const plan = rangePlan(anchor, req.numBefore, numAfter, req.includeAnchor, anchoredLeft, anchoredRight);
  const fetched: MessageRange["rows"] = [];
  if (plan.beforeLimit !== undefined) fetched.push(...(await runRange(deps, base, "before", plan.beforeAnchor!, plan.beforeLimit)).reverse());
  if (plan.afterLimit !== undefined) fetched.push(...(await runRange(deps, base, "after", plan.afterAnchor!, plan.afterLimit)));
  const unique = [...new Map(fetched.map((r) => [r.id, r])).values()].sort((a, b) => a.id - b.id);
  const done = postProcess(unique, req.numBefore, numAfter, anchor, anchoredLeft, anchoredRight);
  return { rows: done.rows, anchor, foundAnchor: done.foundAnchor, foundOldest: done.foundOldest, foundNewest: done.foundNewest };
}

/**
 * The statement finding the first unread message of the narrow. An unread message always has
 * the viewer's row, so the viewer's unread rows are walked in id order (their partial index) and
 * each row's message checked against the narrow, a lookup by key: the cost follows the unread
 * messages before the answer, not the narrow's history (a scan of the narrow read a channel whose
 * messages were all read from its first message on). Unread messages the viewer muted do not
 * count (Zulip's find_first_unread_anchor).
 */
export function firstUnreadQuery(viewer: Viewer, terms: ResolvedTerm[]): { text: string; params: unknown[] } {
  const params: unknown[] = [viewer.userId, viewer.realmId];
  const bind = (v: unknown) => `$${params.push(v)}`;
  const conds = [...narrowConditions(terms, viewer.userId, params), ...mutingConditions(terms, viewer.userId, bind)];
  const text = `SELECT um.message_id AS id FROM usermessages um
      WHERE um.user_id = $1 AND um.realm_id = $2 AND (um.flags & ${FLAG_BITS.read}) = 0
        AND (SELECT true FROM messages m WHERE m.id = um.message_id AND m.realm_id = $2${conds.map((c) => ` AND ${c}`).join("")})
      ORDER BY um.message_id LIMIT 1`;
  return { text, params };
}

async function firstUnread(deps: AppDeps, viewer: Viewer, terms: ResolvedTerm[], customPlan: boolean): Promise<number | null> {
  const { text, params } = firstUnreadQuery(viewer, terms);
  const { rows } = await runQuery(deps, customPlan, text, params);
  return rows.length ? Number(rows[0].id) : null;
}

interface BaseQuery {
  from: string;
  params: unknown[];
  select: string;
  /**
   * Plan with the actual values each time (not the pool's prepared, generic plan): a generic
   * plan cannot tell a rare search word from a common one, and for a rare word on a large
   * channel it walked every message testing the search (160 ms instead of 4 at 100,000).
   */
  customPlan: boolean;
}

/** Runs a message query, unprepared when it needs plans made with its values (BaseQuery.customPlan). */
function runQuery(deps: AppDeps, customPlan: boolean, text: string, values: unknown[]) {
  // The pool prepares `query(text, values)`; a config object runs as an unnamed statement.
  return customPlan ? deps.pool.query({ text, values }) : deps.pool.query(text, values);
}

/** The topic HTML-escaped as Zulip's match_subject has it (Python's html.escape: quotes too). */
const ESCAPED_TOPIC_SQL = `replace(replace(replace(replace(replace(m.topic, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#x27;')`;

interface BaseQueryOptions {
  /** Search highlights (`match_content`, `match_subject`) for a search narrow. Default true. */
  highlight?: boolean;
  /** The match fields also without a search: the content and the escaped topic as they are. */
  alwaysMatchFields?: boolean;
  /** Only messages the viewer received (has a row for), whatever the narrow. */
  receivedOnly?: boolean;
}

/**
 * A narrow to one channel whose history the viewer may read, or to all public channels, searches
 * all their messages; any other narrow searches only what the viewer received (Zulip's
 * ok_to_include_history).
 */
function baseQuery(viewer: Viewer, terms: ResolvedTerm[], opts: BaseQueryOptions = {}): BaseQuery {
  const params: unknown[] = [viewer.userId, viewer.realmId];
  const history = !opts.receivedOnly && terms.some((t) => (t.kind === "stream" || t.kind === "streams") && !t.negated && t.history) && !needsOwnRows(terms);
  const conds = narrowConditions(terms, viewer.userId, params);
  // Every search term's words are highlighted (Zulip searches for all the terms' words at once).
  const searches = terms.filter((t): t is Extract<ResolvedTerm, { kind: "search" }> => t.kind === "search" && !t.negated);
  const search = searches.length > 0;
  let select = `${MESSAGE_COLUMNS}, ${FLAGS_SQL} AS um_flags`;
  if (search && (opts.highlight ?? true)) {
    const q = `(${searches.map((t) => `websearch_to_tsquery('english', $${params.push(t.text)})`).join(" && ")})`;
    select += `, ts_headline('english', m.rendered_content, ${q}, 'HighlightAll=true, StartSel="<span class=""highlight"">", StopSel=</span>') AS match_content`;
    select += `, ts_headline('english', ${ESCAPED_TOPIC_SQL}, ${q}, 'HighlightAll=true, StartSel="<span class=""highlight"">", StopSel=</span>') AS match_subject`;
  } else if (opts.alwaysMatchFields) {
    select += `, m.rendered_content AS match_content, ${ESCAPED_TOPIC_SQL} AS match_subject`;
  }
  const where = conds.length ? ` AND ${conds.join(" AND ")}` : "";
  // The viewer's row of each message, looked up per message: as a plain LEFT JOIN, a page after
  // an old anchor became a merge join that read the viewer's rows from the channel's first
  // message up to the anchor (10 ms at 20,000 messages in, growing with the depth). LIMIT 1
  // keeps PostgreSQL from turning the lookup back into such a join.
  const from = history
    ? `FROM messages m LEFT JOIN LATERAL (SELECT flags FROM usermessages WHERE user_id = $1 AND message_id = m.id LIMIT 1) um ON true WHERE m.realm_id = $2${where}`
    : `FROM usermessages um JOIN messages m ON m.id = um.message_id WHERE um.user_id = $1 AND um.realm_id = $2${where}`;
  return { from, params, select, customPlan: search };
}

/** One side of a page of the narrow around an anchor, as a statement. */
function rangeQuery(base: BaseQuery, side: "before" | "after", anchor: number, limit: number): { text: string; params: unknown[] } {
  const params = [...base.params, anchor, limit];
  const n = params.length;
  const text =
    side === "before"
      ? `SELECT ${base.select} ${base.from} AND m.id <= $${n - 1} ORDER BY m.id DESC LIMIT $${n}`
      : `SELECT ${base.select} ${base.from} AND m.id >= $${n - 1} ORDER BY m.id ASC LIMIT $${n}`;
  return { text, params };
}

/** The statement GET /messages reads the newest `limit` messages of a narrow with (for plan tests). */
export function newestInNarrowQuery(viewer: Viewer, terms: ResolvedTerm[], limit: number): { text: string; params: unknown[] } {
  return rangeQuery(baseQuery(viewer, terms), "before", LARGER_THAN_MAX_MESSAGE_ID, limit);
}

async function runRange(deps: AppDeps, base: BaseQuery, side: "before" | "after", anchor: number, limit: number) {
  const { text, params } = rangeQuery(base, side, anchor, limit);
  const { rows } = await runQuery(deps, base.customPlan, text, params);
  return rows.map(toRangeRow);
}

function toRangeRow(r: Record<string, any>): MessageRange["rows"][number] {
  const extra: Partial<MessageObject> = {};
  if (r.match_content !== undefined) {
    extra.match_content = r.match_content;
    extra.match_subject = r.match_subject;
  }
  return { ...toMessage(r), umFlags: r.um_flags as number, extra };
}

/**
 * Which of `ids` match the narrow, among the messages the viewer received (Zulip's
 * messages_in_narrow reads the viewer's own rows only, even where channel history is readable),
 * in id order, each with `match_content`/`match_subject` as GET /messages has them for a search,
 * and as the content and escaped topic otherwise.
 */
export async function selectReceivedInNarrow(deps: AppDeps, who: Identity, ids: number[], narrow: NarrowTerm[]): Promise<MessageRange["rows"]> {
  const viewer = viewerOf(who);
  const terms = await resolveNarrow(deps, viewer, narrow);
  if (ids.length === 0) return [];
  const base = baseQuery(viewer, terms, { receivedOnly: true, alwaysMatchFields: true });
  const params = [...base.params, [...new Set(ids)]];
  const { rows } = await runQuery(deps, base.customPlan, `SELECT ${base.select} ${base.from} AND m.id = ANY($${params.length}::bigint[]) ORDER BY m.id`, params);
  return rows.map(toRangeRow);
}

async function getByIds(deps: AppDeps, viewer: Viewer, req: GetMessagesRequest, terms: ResolvedTerm[]): Promise<GetMessagesResult> {
  const base = baseQuery(viewer, terms);
  const params = [...base.params, req.messageIds];
  const { rows } = await runQuery(deps, base.customPlan, `SELECT ${base.select} ${base.from} AND m.id = ANY($${params.length}::bigint[]) ORDER BY m.id`, params);
  // Messages readable through channel history are included even without a narrow.
  const found = new Set(rows.map((r) => Number(r.id)));
  const accessed = await accessMessages(deps.pool, viewer, req.messageIds!.filter((id) => !found.has(id)));
  const items = [
    ...rows.map((r) => ({ row: toMessage(r), flags: r.um_flags as number })),
    ...(terms.length === 0 ? [...accessed.values()].map((a) => ({ row: a.row, flags: a.flags ?? FLAG_BITS.read | FLAG_BITS.historical })) : []),
  ].sort((a, b) => a.row.id - b.row.id);
  return { messages: await formatMessages(deps, viewer.realmId, items, { applyMarkdown: req.applyMarkdown, clientGravatar: req.clientGravatar, viewer }) };
}

/** GET /messages/{id}: Zulip computes it with client_gravatar on (a Gravatar is left to the client). */
export async function getMessageById(deps: AppDeps, who: Identity, id: number, applyMarkdown: boolean): Promise<{ message: MessageObject; raw_content: string }> {
  const viewer = viewerOf(who);
  const found = (await accessMessagesById(deps.pool, viewer, [id])).get(id);
  if (!found) throw badRequest("Invalid message(s)");
  const [message] = await formatMessages(deps, who.realmId, [{ row: found.row, flags: found.flags ?? FLAG_BITS.read | FLAG_BITS.historical }], {
    applyMarkdown,
    clientGravatar: true,
    viewer,
  });
  return { message, raw_content: found.row.content };
}

