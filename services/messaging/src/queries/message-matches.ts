import type { NarrowTerm } from "@chat/contracts";
import type { Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { selectReceivedInNarrow } from "./messages";

export type NarrowMatches = Record<string, { match_content: string; match_subject: string }>;

/**
 * GET /messages/matches_narrow (Zulip's messages_in_narrow_backend): the given messages that the
 * viewer received and that match the narrow, keyed by id, with the match fields a client splices
 * into a message event's message to get what GET /messages would give for this narrow.
 */
export async function getMessagesMatchingNarrow(deps: AppDeps, who: Identity, ids: number[], narrow: NarrowTerm[]): Promise<NarrowMatches> {
  const rows = await selectReceivedInNarrow(deps, who, ids, narrow);
  return Object.fromEntries(rows.map((r) => [String(r.id), { match_content: r.extra.match_content!, match_subject: r.extra.match_subject! }]));
}
