import { actor, NAME, read, repoLink, repoName, withBody, type GitHubEvent, type GitHubPayload } from "./github-common";
import { formatIssueComment, formatIssues, formatPullRequest, formatPullRequestReview, formatPullRequestReviewComment } from "./github-threads";
import { escapeInline, firstLine, inlineCode, link, plural } from "./markdown";
import { isObject, missingEventHeader, unsupportedEventType, type WebhookMessage } from "./payload";

/**
 * GitHub's webhooks (repository or organization): the event is named by the `X-GitHub-Event`
 * header, the payload is GitHub's JSON. Pushes go to "<repo> / <branch>", pull requests (their
 * reviews too) and issues to their own topics (github-threads.ts), the rest to the repository's
 * name. The event types `only_events` / `exclude_events` match are the contract's GITHUB_EVENT_TYPES.
 */

export const EVENT_HEADER = "X-GitHub-Event";

export interface GitHubOptions {
  /** The branches whose pushes are posted (all when absent): those whose names occur in it. */
  branches?: string;
}

/** At most this many commits of a push are listed; the rest are counted. */
const MAX_COMMITS = 10;

export function formatGitHub(header: string | undefined, payload: unknown, options: GitHubOptions = {}): WebhookMessage[] {
  const event = header?.trim();
  if (!event) throw missingEventHeader(EVENT_HEADER);
  if (!isObject(payload)) throw read.anomalous("Expected a JSON object.");
  const message = formatEvent(event, payload, options);
  return message ? [message] : [];
}

function formatEvent(event: string, payload: GitHubPayload, options: GitHubOptions): GitHubEvent | null {
  switch (event) {
    case "ping":
      return formatPing(payload);
    case "push":
      return formatPush(payload, options);
    case "create":
    case "delete":
      return formatRefChange(event, payload);
    case "pull_request":
      return formatPullRequest(payload);
    case "pull_request_review":
      return formatPullRequestReview(payload);
    case "pull_request_review_comment":
      return formatPullRequestReviewComment(payload);
    case "issues":
      return formatIssues(payload);
    case "issue_comment":
      return formatIssueComment(payload);
    case "commit_comment":
      return formatCommitComment(payload);
    case "release":
      return formatRelease(payload);
    case "fork":
      return formatFork(payload);
    case "star":
      return formatStar(payload);
    case "watch":
      return { topic: repoName(payload), eventType: "watch", content: `${actor(payload)} starred ${repoLink(payload)}.` };
    default:
      throw unsupportedEventType(NAME, event);
  }
}

function formatPing(payload: GitHubPayload): GitHubEvent {
  const events = (read.optList(payload, "hook.events") ?? []).filter((e): e is string => typeof e === "string");
  const sends = events.length > 0 ? ` It will send: ${events.map(inlineCode).join(", ")}.` : "";
  // An organization's hook has no repository.
  const org = read.optStr(payload, "organization.login");
  const [topic, scope] = read.optObj(payload, "repository")
    ? [repoName(payload), ` for ${repoLink(payload)}`]
    : org !== undefined
      ? [org, ` for the organization **${escapeInline(org)}**`]
      : ["GitHub", ""];
  return { topic, eventType: "ping", content: `${actor(payload)} set up a GitHub webhook${scope}.${sends}` };
}

function formatPush(payload: GitHubPayload, options: GitHubOptions): GitHubEvent | null {
  const ref = read.str(payload, "ref");
  const pusher = read.optStr(payload, "pusher.name") ?? read.optStr(payload, "sender.login") ?? "Someone";
  const who = `**${escapeInline(pusher)}**`;
  const deleted = read.optBool(payload, "deleted") === true;
  const created = read.optBool(payload, "created") === true;
  if (ref.startsWith("refs/tags/")) {
    const tag = ref.slice("refs/tags/".length);
    const url = `${read.str(payload, "repository.html_url")}/releases/tag/${encodeURIComponent(tag)}`;
    const content = deleted ? `${who} deleted the tag ${inlineCode(tag)}.` : `${who} pushed the tag ${link(tag, url)}.`;
    return { topic: repoName(payload), eventType: "push_tags", content };
  }
  const branch = ref.replace(/^refs\/heads\//, "");
  if (options.branches !== undefined && !branchListed(options.branches, branch)) return null;
  const topic = `${repoName(payload)} / ${branch}`;
  if (deleted) return { topic, eventType: "push_commits", content: `${who} deleted the branch ${inlineCode(branch)}.` };
  const commits = (read.optList(payload, "commits") ?? []).filter(isObject);
  const compare = read.optStr(payload, "compare");
  const branchLink = compare ? link(branch, compare) : inlineCode(branch);
  if (commits.length === 0) {
    const content = created ? `${who} created the branch ${branchLink}.` : `${who} pushed to the branch ${branchLink} (no new commits).`;
    return { topic, eventType: "push_commits", content };
  }
  const verb = read.optBool(payload, "forced") === true ? "force-pushed" : "pushed";
  const lines = commits.slice(0, MAX_COMMITS).map((c) => commitLine(c, pusher));
  if (commits.length > MAX_COMMITS) lines.push(`* …and ${plural(commits.length - MAX_COMMITS, "more commit")}`);
  const onto = created ? `the new branch ${branchLink}` : `the branch ${branchLink}`;
  return { topic, eventType: "push_commits", content: `${who} ${verb} ${plural(commits.length, "commit")} to ${onto}:\n${lines.join("\n")}` };
}

/** Zulip's test (`branches.find(branch) == -1` skips the push): the branch's name occurs anywhere in the text. */
const branchListed = (branches: string, branch: string) => branches.includes(branch);

function commitLine(commit: Record<string, unknown>, pusher: string): string {
  const sha = read.str(commit, "id");
  const url = read.str(commit, "url");
  const message = firstLine(read.optStr(commit, "message") ?? "") || "(no message)";
  const author = read.optStr(commit, "author.username") ?? read.optStr(commit, "author.name");
  const by = author && author !== pusher ? ` (${escapeInline(author)})` : "";
  return `* ${escapeInline(message)} (${link(sha.slice(0, 7), url)})${by}`;
}

/** A branch or a tag created or deleted (GitHub's `create` and `delete` events, whatever pushed it). */
function formatRefChange(event: "create" | "delete", payload: GitHubPayload): GitHubEvent {
  const kind = read.str(payload, "ref_type");
  if (kind !== "branch" && kind !== "tag") throw unsupportedEventType(NAME, `${event}:${kind}`);
  const ref = read.str(payload, "ref");
  const repo = read.str(payload, "repository.html_url");
  const url = kind === "branch" ? `${repo}/tree/${ref.split("/").map(encodeURIComponent).join("/")}` : `${repo}/releases/tag/${encodeURIComponent(ref)}`;
  const content = event === "create" ? `${actor(payload)} created the ${kind} ${link(ref, url)}.` : `${actor(payload)} deleted the ${kind} ${inlineCode(ref)}.`;
  return { topic: repoName(payload), eventType: event, content };
}

/** A comment on a commit (on one of its lines, or on the whole): the commit, linked, and the comment quoted. */
function formatCommitComment(payload: GitHubPayload): GitHubEvent {
  const action = read.optStr(payload, "action") ?? "created";
  if (action !== "created") throw unsupportedEventType(NAME, `commit_comment:${action}`);
  const sha = read.str(payload, "comment.commit_id");
  const commit = link(sha.slice(0, 7), `${read.str(payload, "repository.html_url")}/commit/${sha}`);
  const path = read.optStr(payload, "comment.path");
  const on = `${path ? `${inlineCode(path)} in ` : ""}the commit ${commit}`;
  const did = `${link("commented", read.str(payload, "comment.html_url"))} on ${on}`;
  return { topic: repoName(payload), eventType: "commit_comment", content: withBody(`${actor(payload)} ${did}`, read.optStr(payload, "comment.body")) };
}

function formatFork(payload: GitHubPayload): GitHubEvent {
  const fork = read.optStr(payload, "forkee.full_name") ?? read.str(payload, "forkee.name");
  const content = `${actor(payload)} forked ${repoLink(payload)} to ${link(fork, read.str(payload, "forkee.html_url"))}.`;
  return { topic: repoName(payload), eventType: "fork", content };
}

/** A release's life brings several events at once (created, published, released); the published one speaks for them. */
const RELEASE_ACTIONS: Record<string, string | undefined> = { published: "published", unpublished: "unpublished", edited: "edited", deleted: "deleted" };

function formatRelease(payload: GitHubPayload): GitHubEvent | null {
  const action = read.str(payload, "action");
  const verb = Object.hasOwn(RELEASE_ACTIONS, action) ? RELEASE_ACTIONS[action] : undefined;
  if (verb === undefined) return null;
  const tag = read.str(payload, "release.tag_name");
  const name = read.optStr(payload, "release.name")?.trim() || tag;
  const url = read.str(payload, "release.html_url");
  const kind = read.optBool(payload, "release.prerelease") === true ? "the pre-release" : "the release";
  const shown = action === "deleted" ? `**${escapeInline(name)}**` : link(name, url);
  const ofTag = name === tag ? "" : ` (tag ${inlineCode(tag)})`;
  return { topic: repoName(payload), eventType: "release", content: `${actor(payload)} ${verb} ${kind} ${shown}${ofTag} of ${repoLink(payload)}.` };
}

function formatStar(payload: GitHubPayload): GitHubEvent | null {
  const action = read.str(payload, "action");
  if (action !== "created" && action !== "deleted") throw unsupportedEventType(NAME, `star:${action}`);
  const count = read.optNum(payload, "repository.stargazers_count");
  const total = count === undefined ? "" : ` (${plural(count, "star")} now)`;
  return { topic: repoName(payload), eventType: "star", content: `${actor(payload)} ${action === "created" ? "starred" : "unstarred"} ${repoLink(payload)}${total}.` };
}
