import type { GitHubEventType } from "@chat/contracts";
import { escapeInline, link, quoteBlock } from "./markdown";
import { anomalousPayload, payloadReader, type WebhookMessage } from "./payload";

/** What GitHub's formatters share: Zulip's name for the integration, the payload's reader, the repository and the actor. */

export const NAME = "GitHub";

export type GitHubPayload = Record<string, unknown>;

/** Every GitHub message has its event type, one the contract lists. */
export type GitHubEvent = WebhookMessage & { eventType: GitHubEventType };

export const read = { ...payloadReader(NAME), anomalous: (reason: string) => anomalousPayload(NAME, reason) };

/** The repository's short name (topics start with it, as Zulip's do). */
export const repoName = (payload: GitHubPayload) => read.str(payload, "repository.name");

/** The repository as "owner/name", linked. */
export const repoLink = (payload: GitHubPayload) =>
  link(read.optStr(payload, "repository.full_name") ?? repoName(payload), read.str(payload, "repository.html_url"));

/** Who did it: the event's sender, in bold. */
export const actor = (payload: GitHubPayload) => `**${escapeInline(read.optStr(payload, "sender.login") ?? "Someone")}**`;

/** A GitHub login in bold, or "someone" when the payload has none. */
export const login = (value: string | undefined) => (value === undefined ? "someone" : `**${escapeInline(value)}**`);

/** "<sentence>:" and someone's text (a comment, a review) quoted, or "<sentence>." without any. */
export function withBody(sentence: string, body: string | undefined): string {
  const text = body?.trim();
  return text ? `${sentence}:\n\n${quoteBlock(text)}` : `${sentence}.`;
}
