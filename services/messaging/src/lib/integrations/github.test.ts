import { describe, expect, it } from "vitest";
import { formatGitHub } from "./github";
import { errorOf } from "./errors.test-support";

const repository = { name: "chat", full_name: "acme/chat", html_url: "https://github.com/acme/chat", stargazers_count: 42 };
const REPO = "[acme/chat](https://github.com/acme/chat)";
const commit = (n: number, message = `Change ${n}`, username = "ana") => ({
  id: `${n}`.padStart(7, "0") + "abcdef0123456789",
  message,
  url: `https://github.com/acme/chat/commit/${n}`,
  author: { name: "Ana", username },
});
const push = (extra: Record<string, unknown>) => ({
  ref: "refs/heads/main",
  compare: "https://github.com/acme/chat/compare/1...2",
  pusher: { name: "ana" },
  sender: { login: "ana" },
  repository,
  commits: [],
  ...extra,
});
const pullRequest = (action: string, extra: Record<string, unknown> = {}, pr: Record<string, unknown> = {}) => ({
  action,
  number: 12,
  pull_request: {
    number: 12,
    title: "Fix the login",
    html_url: "https://github.com/acme/chat/pull/12",
    user: { login: "ana" },
    body: "",
    head: { ref: "fix-login", sha: "fedcba9876543210" },
    base: { ref: "main" },
    merged: false,
    ...pr,
  },
  sender: { login: "ana" },
  repository,
  ...extra,
});
const PR = "[#12 Fix the login](https://github.com/acme/chat/pull/12)";
const PR_TOPIC = "chat / PR #12 Fix the login";
const issue = { number: 7, title: "Crash on start", html_url: "https://github.com/acme/chat/issues/7", user: { login: "ana" }, body: "" };
const ISSUE = "[#7 Crash on start](https://github.com/acme/chat/issues/7)";
const ISSUE_TOPIC = "chat / issue #7 Crash on start";
const issues = (action: string, extra: Record<string, unknown> = {}) => ({ action, issue, sender: { login: "bob" }, repository, ...extra });

describe("GitHub pushes", () => {
  it("list the commits, each with its first line and a short sha link, in the topic '<repo> / <branch>'", () => {
    const payload = push({ commits: [commit(1, "Fix *login*\n\nThe long story"), commit(2, "Add [tests]", "bob")] });
    expect(formatGitHub("push", payload)).toEqual([
      {
        topic: "chat / main",
        eventType: "push_commits",
        content:
          "**ana** pushed 2 commits to the branch [main](https://github.com/acme/chat/compare/1...2):\n" +
          "* Fix \\*login\\* ([0000001](https://github.com/acme/chat/commit/1))\n" +
          "* Add \\[tests\\] ([0000002](https://github.com/acme/chat/commit/2)) (bob)",
      },
    ]);
  });

  it("show ten commits at most, and count the others", () => {
    const [message] = formatGitHub("push", push({ commits: Array.from({ length: 13 }, (_, i) => commit(i + 1)) }));
    const lines = message.content.split("\n");
    expect(lines[0]).toBe("**ana** pushed 13 commits to the branch [main](https://github.com/acme/chat/compare/1...2):");
    expect(lines.slice(1, -1)).toHaveLength(10);
    expect(lines.at(-2)).toBe("* Change 10 ([0000010](https://github.com/acme/chat/commit/10))");
    expect(lines.at(-1)).toBe("* …and 3 more commits");
    expect(formatGitHub("push", push({ commits: Array.from({ length: 11 }, (_, i) => commit(i + 1)) }))[0].content.split("\n").at(-1)).toBe("* …and 1 more commit");
  });

  it("say so for a force push, a new branch, a deleted branch and tags", () => {
    expect(formatGitHub("push", push({ forced: true, commits: [commit(1)] }))[0].content).toMatch(/^\*\*ana\*\* force-pushed 1 commit to the branch \[main\]/);
    expect(formatGitHub("push", push({ created: true, commits: [commit(1)] }))[0].content).toMatch(/^\*\*ana\*\* pushed 1 commit to the new branch \[main\]/);
    expect(formatGitHub("push", push({ created: true, ref: "refs/heads/feature/x" }))).toEqual([
      { topic: "chat / feature/x", eventType: "push_commits", content: "**ana** created the branch [feature/x](https://github.com/acme/chat/compare/1...2)." },
    ]);
    expect(formatGitHub("push", push({ deleted: true, compare: undefined }))[0].content).toBe("**ana** deleted the branch `main`.");
    expect(formatGitHub("push", push({ ref: "refs/tags/v1.0", created: true }))).toEqual([
      { topic: "chat", eventType: "push_tags", content: "**ana** pushed the tag [v1.0](https://github.com/acme/chat/releases/tag/v1.0)." },
    ]);
    expect(formatGitHub("push", push({ ref: "refs/tags/v1.0", deleted: true }))[0]).toMatchObject({ eventType: "push_tags", content: "**ana** deleted the tag `v1.0`." });
  });

  it("of branches whose names do not occur in `branches` are dropped (Zulip's substring test); tags are not filtered", () => {
    const on = (branch: string) => push({ ref: `refs/heads/${branch}`, commits: [commit(1)] });
    expect(formatGitHub("push", on("dev"), { branches: "main, dev" })).toHaveLength(1);
    expect(formatGitHub("push", on("dev"), { branches: "main" })).toEqual([]);
    expect(formatGitHub("push", on("maintenance"), { branches: "main" })).toEqual([]);
    // As in Zulip: a branch whose name is part of a listed one's, or spans the list, is posted.
    expect(formatGitHub("push", on("dev"), { branches: "main,development" })).toHaveLength(1);
    expect(formatGitHub("push", on("ain"), { branches: "main" })).toHaveLength(1);
    expect(formatGitHub("push", on("n,r"), { branches: "main,release" })).toHaveLength(1);
    expect(formatGitHub("push", on("main"), { branches: "" })).toEqual([]);
    expect(formatGitHub("push", push({ ref: "refs/tags/v2", created: true }), { branches: "main" })).toHaveLength(1);
  });
});

describe("GitHub pull requests", () => {
  it("opened: who, which branches, and the description quoted, in the topic '<repo> / PR #N <title>'", () => {
    expect(formatGitHub("pull_request", pullRequest("opened", {}, { body: "It was *broken*.\n@**all** please look" }))).toEqual([
      {
        topic: PR_TOPIC,
        eventType: "opened_pull_request",
        content: `**ana** opened the pull request ${PR} to merge \`fix-login\` into \`main\`.\n\n~~~ quote\nIt was *broken*.\n\\@**all** please look\n~~~`,
      },
    ]);
    expect(formatGitHub("pull_request", pullRequest("reopened", {}, { draft: true, body: "ignored" }))[0]).toMatchObject({
      eventType: "opened_pull_request",
      content: `**ana** reopened the draft pull request ${PR} to merge \`fix-login\` into \`main\`.`,
    });
  });

  it("closed: merged by whom into which branch, or closed without merging", () => {
    expect(formatGitHub("pull_request", pullRequest("closed", { sender: { login: "bob" } }, { merged: true }))[0]).toEqual({
      topic: PR_TOPIC,
      eventType: "closed_pull_request",
      content: `**bob** merged the pull request ${PR} by **ana** into \`main\`.`,
    });
    expect(formatGitHub("pull_request", pullRequest("closed", {}, { merged: true }))[0].content).toBe(`**ana** merged the pull request ${PR} into \`main\`.`);
    expect(formatGitHub("pull_request", pullRequest("closed"))[0].content).toBe(`**ana** closed the pull request ${PR} without merging it.`);
  });

  it("updated, assigned and unassigned", () => {
    const text = (action: string, extra: Record<string, unknown> = {}) => formatGitHub("pull_request", pullRequest(action, extra))[0];
    expect(text("edited", { changes: { title: { from: "Old *title*" } } })).toMatchObject({
      eventType: "updated_pull_request",
      content: `**ana** edited the pull request ${PR} (renamed from "Old \\*title\\*").`,
    });
    expect(text("synchronize").content).toBe(`**ana** pushed new commits to the pull request ${PR} (now at [fedcba9](https://github.com/acme/chat/pull/12/commits/fedcba9876543210)).`);
    expect(text("ready_for_review")).toMatchObject({ eventType: "pull_request_ready_for_review", content: `**ana** marked the pull request ${PR} as ready for review.` });
    expect(text("converted_to_draft")).toMatchObject({ eventType: "updated_pull_request", content: `**ana** turned the pull request ${PR} back into a draft.` });
    expect(text("assigned", { assignee: { login: "cy" } })).toMatchObject({
      eventType: "assigned_or_unassigned_pull_request",
      content: `**ana** assigned **cy** to the pull request ${PR}.`,
    });
    expect(text("unassigned", { assignee: { login: "ana" } }).content).toBe(`**ana** unassigned themselves from the pull request ${PR}.`);
  });

  it("review requested (of a person or a team)", () => {
    const text = (action: string, extra: Record<string, unknown> = {}) => formatGitHub("pull_request", pullRequest(action, extra))[0];
    expect(text("review_requested", { requested_reviewer: { login: "cy_d" } })).toEqual({
      topic: PR_TOPIC,
      eventType: "pull_request_review_requested",
      content: `**ana** requested a review from **cy\\_d** on the pull request ${PR}.`,
    });
    expect(text("review_requested", { requested_team: { name: "Core reviewers", slug: "core-reviewers" } }).content).toBe(
      `**ana** requested a review from the team **Core reviewers** on the pull request ${PR}.`,
    );
  });

  it("answer actions they do not post with UNSUPPORTED_WEBHOOK_EVENT_TYPE", () => {
    expect(errorOf(() => formatGitHub("pull_request", pullRequest("auto_merge_enabled")))).toEqual({
      status: 200,
      code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE",
      msg: "The 'pull_request:auto_merge_enabled' event isn't currently supported by the GitHub webhook; ignoring",
    });
    // A pull request's labels are not posted (Zulip ignores them too); an issue's are.
    for (const action of ["labeled", "unlabeled"]) {
      expect(errorOf(() => formatGitHub("pull_request", pullRequest(action, { label: { name: "bug" } })))).toMatchObject({ status: 200, code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE" });
    }
  });
});

describe("GitHub issues and comments", () => {
  it("post issue actions in the topic '<repo> / issue #N <title>'", () => {
    expect(formatGitHub("issues", issues("opened", { issue: { ...issue, body: "Steps:\n~~~\nrun\n~~~" } }))).toEqual([
      { topic: ISSUE_TOPIC, eventType: "issues", content: `**bob** opened the issue ${ISSUE}.\n\n~~~~ quote\nSteps:\n~~~\nrun\n~~~\n~~~~` },
    ]);
    const text = (action: string, extra: Record<string, unknown> = {}) => formatGitHub("issues", issues(action, extra))[0].content;
    expect(text("closed", { issue: { ...issue, state_reason: "not_planned" } })).toBe(`**bob** closed the issue ${ISSUE} as not planned.`);
    expect(text("closed", { issue: { ...issue, state_reason: "completed" } })).toBe(`**bob** closed the issue ${ISSUE} as completed.`);
    expect(text("reopened")).toBe(`**bob** reopened the issue ${ISSUE}.`);
    expect(text("labeled", { label: { name: "bug" } })).toBe(`**bob** added the label \`bug\` to the issue ${ISSUE}.`);
    expect(text("unlabeled", { label: { name: "bug" } })).toBe(`**bob** removed the label \`bug\` from the issue ${ISSUE}.`);
    expect(text("assigned", { assignee: { login: "ana" } })).toBe(`**bob** assigned **ana** to the issue ${ISSUE}.`);
    expect(text("milestoned")).toBe(`**bob** milestoned the issue ${ISSUE}.`);
    expect(text("deleted")).toBe("**bob** deleted the issue **#7 Crash on start**.");
  });

  it("post comments quoted, in the issue's topic, or the pull request's for one on a pull request", () => {
    const comment = { html_url: "https://github.com/acme/chat/issues/7#issuecomment-1", body: "Same here `npm start`" };
    expect(formatGitHub("issue_comment", issues("created", { comment }))).toEqual([
      {
        topic: ISSUE_TOPIC,
        eventType: "issue_comment",
        content: `**bob** [commented](https://github.com/acme/chat/issues/7#issuecomment-1) on the issue ${ISSUE}:\n\n~~~ quote\nSame here \`npm start\`\n~~~`,
      },
    ]);
    const onPr = formatGitHub("issue_comment", issues("edited", { issue: { ...issue, pull_request: { url: "x" } }, comment }))[0];
    expect(onPr.topic).toBe("chat / PR #7 Crash on start");
    expect(onPr.content).toBe(`**bob** edited [a comment](https://github.com/acme/chat/issues/7#issuecomment-1) on the pull request ${ISSUE}:\n\n~~~ quote\nSame here \`npm start\`\n~~~`);
    expect(formatGitHub("issue_comment", issues("deleted", { comment }))[0].content).toBe(`**bob** deleted a comment on the issue ${ISSUE}.`);
  });
});

describe("GitHub's other events", () => {
  it("ping: the hook is set up, for a repository or an organization", () => {
    expect(formatGitHub("ping", { zen: "Keep it simple.", hook: { events: ["push", "issues"] }, repository, sender: { login: "ana" } })).toEqual([
      { topic: "chat", eventType: "ping", content: `**ana** set up a GitHub webhook for ${REPO}. It will send: \`push\`, \`issues\`.` },
    ]);
    expect(formatGitHub("ping", { zen: "x", hook: { events: [] }, organization: { login: "acme" }, sender: { login: "ana" } })).toEqual([
      { topic: "acme", eventType: "ping", content: "**ana** set up a GitHub webhook for the organization **acme**." },
    ]);
  });

  it("release: published, and the events that repeat it posted once", () => {
    const release = (action: string, extra: Record<string, unknown> = {}) => ({
      action,
      release: { tag_name: "v1.0", name: "First [stable]", html_url: "https://github.com/acme/chat/releases/tag/v1.0", prerelease: false, ...extra },
      sender: { login: "ana" },
      repository,
    });
    expect(formatGitHub("release", release("published"))).toEqual([
      { topic: "chat", eventType: "release", content: `**ana** published the release [First \\[stable\\]](https://github.com/acme/chat/releases/tag/v1.0) (tag \`v1.0\`) of ${REPO}.` },
    ]);
    expect(formatGitHub("release", release("published", { name: "", prerelease: true }))[0].content).toBe(
      `**ana** published the pre-release [v1.0](https://github.com/acme/chat/releases/tag/v1.0) of ${REPO}.`,
    );
    expect(formatGitHub("release", release("created"))).toEqual([]);
    expect(formatGitHub("release", release("released"))).toEqual([]);
    expect(formatGitHub("release", release("toString"))).toEqual([]);
  });

  it("star and watch", () => {
    expect(formatGitHub("star", { action: "created", sender: { login: "cy" }, repository })).toEqual([
      { topic: "chat", eventType: "star", content: `**cy** starred ${REPO} (42 stars now).` },
    ]);
    expect(formatGitHub("star", { action: "deleted", sender: { login: "cy" }, repository: { ...repository, stargazers_count: 1 } })[0].content).toBe(`**cy** unstarred ${REPO} (1 star now).`);
    expect(formatGitHub("watch", { action: "started", sender: { login: "cy" }, repository })).toEqual([{ topic: "chat", eventType: "watch", content: `**cy** starred ${REPO}.` }]);
  });
});

describe("GitHub pull request reviews", () => {
  const review = (state: string, body: string | null) =>
    pullRequest("submitted", { review: { id: 81, state, body, html_url: "https://github.com/acme/chat/pull/12#pullrequestreview-81", user: { login: "bob" } }, sender: { login: "bob" } });
  const REVIEW = "https://github.com/acme/chat/pull/12#pullrequestreview-81";

  it("submitted: the verdict, linked to the review, its text quoted, in the pull request's topic", () => {
    expect(formatGitHub("pull_request_review", review("approved", "Looks *good*"))).toEqual([
      { topic: PR_TOPIC, eventType: "pull_request_review", content: `**bob** [approved](${REVIEW}) the pull request ${PR}:\n\n~~~ quote\nLooks *good*\n~~~` },
    ]);
    expect(formatGitHub("pull_request_review", review("CHANGES_REQUESTED", "Please add a test.\n@**all** see"))[0].content).toBe(
      `**bob** [requested changes](${REVIEW}) on the pull request ${PR}:\n\n~~~ quote\nPlease add a test.\n\\@**all** see\n~~~`,
    );
    expect(formatGitHub("pull_request_review", review("commented", null))[0].content).toBe(`**bob** [reviewed](${REVIEW}) the pull request ${PR}.`);
  });

  it("edited or dismissed are UNSUPPORTED_WEBHOOK_EVENT_TYPE", () => {
    for (const action of ["edited", "dismissed"]) {
      expect(errorOf(() => formatGitHub("pull_request_review", { ...review("approved", ""), action }))).toEqual({
        status: 200,
        code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE",
        msg: `The 'pull_request_review:${action}' event isn't currently supported by the GitHub webhook; ignoring`,
      });
    }
  });

  it("review comments: the file, the comment quoted, in the pull request's topic", () => {
    const url = "https://github.com/acme/chat/pull/12#discussion_r5";
    const comment = (action: string, body = "Off by one here?") =>
      pullRequest(action, { comment: { id: 5, path: "src/login.ts", line: 14, body, html_url: url, commit_id: "fedcba9876543210", user: { login: "cy" } }, sender: { login: "cy" } });
    expect(formatGitHub("pull_request_review_comment", comment("created"))).toEqual([
      { topic: PR_TOPIC, eventType: "pull_request_review_comment", content: `**cy** [commented](${url}) on \`src/login.ts\` in the pull request ${PR}:\n\n~~~ quote\nOff by one here?\n~~~` },
    ]);
    expect(formatGitHub("pull_request_review_comment", comment("edited", "Never mind"))[0].content).toBe(
      `**cy** edited [a review comment](${url}) on \`src/login.ts\` in the pull request ${PR}:\n\n~~~ quote\nNever mind\n~~~`,
    );
    expect(formatGitHub("pull_request_review_comment", comment("deleted"))[0].content).toBe(`**cy** deleted a review comment on \`src/login.ts\` in the pull request ${PR}.`);
  });
});

describe("GitHub branches, tags, forks and commit comments", () => {
  const ref = (ref_type: string, name: string) => ({ ref: name, ref_type, master_branch: "main", pusher_type: "user", sender: { login: "ana" }, repository });

  it("create and delete: the branch or tag, in the repository's topic", () => {
    expect(formatGitHub("create", ref("branch", "feature/new login"))).toEqual([
      { topic: "chat", eventType: "create", content: "**ana** created the branch [feature/new login](https://github.com/acme/chat/tree/feature/new%20login)." },
    ]);
    expect(formatGitHub("create", ref("tag", "v2.0"))).toEqual([
      { topic: "chat", eventType: "create", content: "**ana** created the tag [v2.0](https://github.com/acme/chat/releases/tag/v2.0)." },
    ]);
    expect(formatGitHub("delete", ref("branch", "old_*stuff*"))).toEqual([{ topic: "chat", eventType: "delete", content: "**ana** deleted the branch `old_*stuff*`." }]);
    expect(formatGitHub("delete", ref("tag", "v0.1"))[0].content).toBe("**ana** deleted the tag `v0.1`.");
    expect(errorOf(() => formatGitHub("create", ref("repository", "x")))).toMatchObject({ status: 200, code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE" });
  });

  it("create and delete are not filtered by `branches`: only pushes are, as in Zulip", () => {
    expect(formatGitHub("create", ref("branch", "wip"), { branches: "main" })).toHaveLength(1);
  });

  it("fork: who forked it, and the fork, linked", () => {
    const forkee = { name: "chat", full_name: "cy/chat", html_url: "https://github.com/cy/chat", owner: { login: "cy" }, fork: true };
    expect(formatGitHub("fork", { forkee, sender: { login: "cy" }, repository })).toEqual([
      { topic: "chat", eventType: "fork", content: `**cy** forked ${REPO} to [cy/chat](https://github.com/cy/chat).` },
    ]);
  });

  it("commit_comment: the commit (and the file), linked, the comment quoted", () => {
    const url = "https://github.com/acme/chat/commit/0a1b2c3d4e5f60718293#commitcomment-9";
    const comment = (extra: Record<string, unknown>) => ({
      action: "created",
      comment: { id: 9, commit_id: "0a1b2c3d4e5f60718293", body: "Why `sleep(5)`?", html_url: url, path: null, line: null, ...extra },
      sender: { login: "bob" },
      repository,
    });
    const COMMIT = "[0a1b2c3](https://github.com/acme/chat/commit/0a1b2c3d4e5f60718293)";
    expect(formatGitHub("commit_comment", comment({}))).toEqual([
      { topic: "chat", eventType: "commit_comment", content: `**bob** [commented](${url}) on the commit ${COMMIT}:\n\n~~~ quote\nWhy \`sleep(5)\`?\n~~~` },
    ]);
    expect(formatGitHub("commit_comment", comment({ path: "src/app.ts", line: 3, body: "" }))[0].content).toBe(`**bob** [commented](${url}) on \`src/app.ts\` in the commit ${COMMIT}.`);
  });
});

describe("GitHub's errors", () => {
  it("a missing X-GitHub-Event header is MISSING_HTTP_EVENT_HEADER", () => {
    for (const header of [undefined, "", "  "]) {
      expect(errorOf(() => formatGitHub(header, push({})))).toEqual({ status: 400, code: "MISSING_HTTP_EVENT_HEADER", msg: "Missing the HTTP event header 'X-GitHub-Event'" });
    }
  });

  it("an event it does not post is UNSUPPORTED_WEBHOOK_EVENT_TYPE (a 200)", () => {
    expect(errorOf(() => formatGitHub("gollum", { sender: { login: "a" }, repository }))).toEqual({
      status: 200,
      code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE",
      msg: "The 'gollum' event isn't currently supported by the GitHub webhook; ignoring",
    });
    expect(errorOf(() => formatGitHub("toString", {}))).toMatchObject({ code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE" });
  });

  it("a payload without what the event needs is ANOMALOUS_WEBHOOK_PAYLOAD, naming the field", () => {
    const anomalous = (reason: string) => ({ status: 400, code: "ANOMALOUS_WEBHOOK_PAYLOAD", msg: `Unable to parse request: Did GitHub generate this event? ${reason}` });
    expect(errorOf(() => formatGitHub("push", []))).toEqual(anomalous("Expected a JSON object."));
    expect(errorOf(() => formatGitHub("push", { ...push({}), ref: 5 }))).toEqual(anomalous("'ref' is missing or not a string."));
    expect(errorOf(() => formatGitHub("push", { ...push({ commits: [{ id: "abc" }] }) }))).toEqual(anomalous("'url' is missing or not a string."));
    expect(errorOf(() => formatGitHub("pull_request", { action: "opened", repository }))).toEqual(anomalous("'pull_request.number' is missing or not a number."));
    expect(errorOf(() => formatGitHub("issues", issues("opened", { repository: { name: ["x"] } })))).toEqual(anomalous("'repository.name' is missing or not a string."));
  });
});
