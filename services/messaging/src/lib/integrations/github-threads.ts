import type { GitHubEventType } from "@chat/contracts";
import { actor, login, NAME, read, repoName, withBody, type GitHubEvent, type GitHubPayload } from "./github-common";
import { escapeInline, inlineCode, link, quoteBlock } from "./markdown";
import { unsupportedEventType } from "./payload";

/**
 * GitHub's pull request, issue and comment events: each pull request and issue has its topic,
 * "<repo> / PR #N <title>" or "<repo> / issue #N <title>", where its comments go as well (a
 * pull request's reviews and review comments too).
 */

interface Thread {
  topic: string;
  /** "#12 Fix the login", linked. */
  ref: string;
  /** "#12 Fix the login", as bold text (for a deleted issue, whose link leads nowhere). */
  plain: string;
}

function thread(payload: GitHubPayload, key: "pull_request" | "issue", kind: "PR" | "issue"): Thread {
  const number = read.num(payload, `${key}.number`);
  const title = read.str(payload, `${key}.title`);
  const url = read.str(payload, `${key}.html_url`);
  return { topic: `${repoName(payload)} / ${kind} #${number} ${title}`, ref: link(`#${number} ${title}`, url), plain: `**#${number} ${escapeInline(title)}**` };
}

/** Pull request actions by the event type they count as (Zulip's names for them). */
const PULL_REQUEST_EVENT_TYPES: Record<string, GitHubEventType> = {
  opened: "opened_pull_request",
  reopened: "opened_pull_request",
  closed: "closed_pull_request",
  edited: "updated_pull_request",
  synchronize: "updated_pull_request",
  converted_to_draft: "updated_pull_request",
  ready_for_review: "pull_request_ready_for_review",
  assigned: "assigned_or_unassigned_pull_request",
  unassigned: "assigned_or_unassigned_pull_request",
  review_requested: "pull_request_review_requested",
  // labeled and unlabeled are not posted, as in Zulip: a pull request's labels are its own business.
};

export function formatPullRequest(payload: GitHubPayload): GitHubEvent {
  const action = read.str(payload, "action");
  if (!Object.hasOwn(PULL_REQUEST_EVENT_TYPES, action)) throw unsupportedEventType(NAME, `pull_request:${action}`);
  const { topic, ref } = thread(payload, "pull_request", "PR");
  const who = actor(payload);
  const pr = `the pull request ${ref}`;
  let content: string;
  switch (action) {
    case "opened":
    case "reopened": {
      const head = read.optStr(payload, "pull_request.head.ref");
      const base = read.optStr(payload, "pull_request.base.ref");
      const draft = read.optBool(payload, "pull_request.draft") === true ? "the draft pull request" : "the pull request";
      const branches = head && base ? ` to merge ${inlineCode(head)} into ${inlineCode(base)}` : "";
      const body = action === "opened" ? read.optStr(payload, "pull_request.body")?.trim() : undefined;
      content = `${who} ${action} ${draft} ${ref}${branches}.${body ? `\n\n${quoteBlock(body)}` : ""}`;
      break;
    }
    case "closed": {
      if (read.optBool(payload, "pull_request.merged") !== true) {
        content = `${who} closed ${pr} without merging it.`;
        break;
      }
      const author = read.optStr(payload, "pull_request.user.login");
      const base = read.optStr(payload, "pull_request.base.ref");
      const by = author !== undefined && author !== read.optStr(payload, "sender.login") ? ` by ${login(author)}` : "";
      content = `${who} merged ${pr}${by}${base ? ` into ${inlineCode(base)}` : ""}.`;
      break;
    }
    case "edited":
      content = `${who} edited ${pr}${renamed(payload)}.`;
      break;
    case "synchronize": {
      const sha = read.optStr(payload, "pull_request.head.sha");
      const url = read.str(payload, "pull_request.html_url");
      content = `${who} pushed new commits to ${pr}${sha ? ` (now at ${link(sha.slice(0, 7), `${url}/commits/${sha}`)})` : ""}.`;
      break;
    }
    case "ready_for_review":
      content = `${who} marked ${pr} as ready for review.`;
      break;
    case "converted_to_draft":
      content = `${who} turned ${pr} back into a draft.`;
      break;
    case "review_requested":
      content = `${who} requested a review from ${reviewer(payload)} on ${pr}.`;
      break;
    default:
      content = assignment(payload, action, pr);
  }
  return { topic, eventType: PULL_REQUEST_EVENT_TYPES[action], content };
}

export function formatIssues(payload: GitHubPayload): GitHubEvent {
  const action = read.str(payload, "action");
  const { topic, ref, plain } = thread(payload, "issue", "issue");
  const who = actor(payload);
  const issue = `the issue ${ref}`;
  let content: string;
  switch (action) {
    case "opened": {
      const body = read.optStr(payload, "issue.body")?.trim();
      content = `${who} opened ${issue}.${body ? `\n\n${quoteBlock(body)}` : ""}`;
      break;
    }
    case "closed": {
      const reason = read.optStr(payload, "issue.state_reason");
      content = `${who} closed ${issue}${reason === "completed" ? " as completed" : reason === "not_planned" ? " as not planned" : ""}.`;
      break;
    }
    case "edited":
      content = `${who} edited ${issue}${renamed(payload)}.`;
      break;
    case "deleted":
      content = `${who} deleted the issue ${plain}.`;
      break;
    case "assigned":
    case "unassigned":
      content = assignment(payload, action, issue);
      break;
    case "labeled":
    case "unlabeled":
      content = labelChange(payload, action, issue);
      break;
    default:
      // reopened, pinned, locked, transferred, milestoned, ...: GitHub's verb says it.
      content = `${who} ${escapeInline(action.replace(/_/g, " "))} ${issue}.`;
  }
  return { topic, eventType: "issues", content };
}

export function formatIssueComment(payload: GitHubPayload): GitHubEvent {
  const action = read.str(payload, "action");
  if (action !== "created" && action !== "edited" && action !== "deleted") throw unsupportedEventType(NAME, `issue_comment:${action}`);
  // GitHub sends a pull request's conversation comments as comments on an issue that has `pull_request`.
  const onPullRequest = read.optObj(payload, "issue.pull_request") !== undefined;
  const { topic, ref } = onPullRequest ? thread(payload, "issue", "PR") : thread(payload, "issue", "issue");
  const on = `the ${onPullRequest ? "pull request" : "issue"} ${ref}`;
  const who = actor(payload);
  if (action === "deleted") return { topic, eventType: "issue_comment", content: `${who} deleted a comment on ${on}.` };
  const url = read.str(payload, "comment.html_url");
  const did = action === "created" ? `${link("commented", url)} on ${on}` : `edited ${link("a comment", url)} on ${on}`;
  return { topic, eventType: "issue_comment", content: withBody(`${who} ${did}`, read.optStr(payload, "comment.body")) };
}

/** A review of a pull request, once submitted: its verdict, linked to it, and its text quoted. */
export function formatPullRequestReview(payload: GitHubPayload): GitHubEvent {
  const action = read.str(payload, "action");
  if (action !== "submitted") throw unsupportedEventType(NAME, `pull_request_review:${action}`);
  const { topic, ref } = thread(payload, "pull_request", "PR");
  const url = read.str(payload, "review.html_url");
  // Webhooks name the state in lower case, the REST API in upper case.
  const state = read.optStr(payload, "review.state")?.toLowerCase();
  const did =
    state === "approved"
      ? `${link("approved", url)} the pull request ${ref}`
      : state === "changes_requested"
        ? `${link("requested changes", url)} on the pull request ${ref}`
        : `${link("reviewed", url)} the pull request ${ref}`;
  return { topic, eventType: "pull_request_review", content: withBody(`${actor(payload)} ${did}`, read.optStr(payload, "review.body")) };
}

/** A comment on a line of a pull request's changes: which file, and the comment quoted. */
export function formatPullRequestReviewComment(payload: GitHubPayload): GitHubEvent {
  const action = read.str(payload, "action");
  if (action !== "created" && action !== "edited" && action !== "deleted") throw unsupportedEventType(NAME, `pull_request_review_comment:${action}`);
  const { topic, ref } = thread(payload, "pull_request", "PR");
  const path = read.optStr(payload, "comment.path");
  const on = `${path ? `${inlineCode(path)} in ` : ""}the pull request ${ref}`;
  const who = actor(payload);
  if (action === "deleted") return { topic, eventType: "pull_request_review_comment", content: `${who} deleted a review comment on ${on}.` };
  const url = read.str(payload, "comment.html_url");
  const did = action === "created" ? `${link("commented", url)} on ${on}` : `edited ${link("a review comment", url)} on ${on}`;
  return { topic, eventType: "pull_request_review_comment", content: withBody(`${who} ${did}`, read.optStr(payload, "comment.body")) };
}

/** ` (it was "Old title")` when an edit changed the title. */
function renamed(payload: GitHubPayload): string {
  const from = read.optStr(payload, "changes.title.from");
  return from === undefined ? "" : ` (renamed from "${escapeInline(from)}")`;
}

function labelChange(payload: GitHubPayload, action: "labeled" | "unlabeled", what: string): string {
  const label = inlineCode(read.str(payload, "label.name"));
  return action === "labeled" ? `${actor(payload)} added the label ${label} to ${what}.` : `${actor(payload)} removed the label ${label} from ${what}.`;
}

/** Whom a review is asked of: a person (one event each) or a team. */
function reviewer(payload: GitHubPayload): string {
  const team = read.optStr(payload, "requested_team.name");
  return team !== undefined ? `the team **${escapeInline(team)}**` : login(read.optStr(payload, "requested_reviewer.login"));
}

function assignment(payload: GitHubPayload, action: string, what: string): string {
  const assignee = read.optStr(payload, "assignee.login");
  const self = assignee !== undefined && assignee === read.optStr(payload, "sender.login");
  const whom = self ? "themselves" : login(assignee);
  return action === "assigned" ? `${actor(payload)} assigned ${whom} to ${what}.` : `${actor(payload)} unassigned ${whom} from ${what}.`;
}
