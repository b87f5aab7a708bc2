import { describe, expect, it } from "vitest";
import { FLAG_BITS } from "./flags";
import { conversationUrl, emailNoticesOf, emailSettingsOf, htmlToText, mailSubject, missedMessageMail, passingTrigger, wasAway, type NoticeInput } from "./missed-message-email";
import { VISIBILITY } from "./visibility-policy";

const base: NoticeInput = {
  kind: "stream",
  senderId: 1,
  entries: [],
  unmailable: new Set(),
  streamMuted: new Set(),
  topicPolicies: new Map(),
  streamEmail: new Set(),
};

describe("emailNoticesOf", () => {
  it("a direct message: every unread participant but the sender and bots", () => {
    const notices = emailNoticesOf({
      ...base,
      kind: "private",
      entries: [
        { userId: 1, flags: FLAG_BITS.is_private },
        { userId: 2, flags: FLAG_BITS.is_private },
        { userId: 3, flags: FLAG_BITS.is_private | FLAG_BITS.read },
        { userId: 4, flags: FLAG_BITS.is_private },
      ],
      unmailable: new Set([4]),
    });
    expect(notices).toEqual([{ userId: 2, triggers: ["private_message"] }]);
  });

  it("a channel message: mentions always, wildcards and channel notifications outside muted channels and topics", () => {
    const wildcard = FLAG_BITS.stream_wildcard_mentioned;
    const notices = emailNoticesOf({
      ...base,
      entries: [
        { userId: 1, flags: wildcard },
        { userId: 2, flags: FLAG_BITS.mentioned | wildcard },
        { userId: 3, flags: wildcard },
        { userId: 4, flags: wildcard },
        { userId: 5, flags: wildcard },
        { userId: 6, flags: wildcard },
        { userId: 7, flags: 0 },
      ],
      streamMuted: new Set([2, 4, 5]),
      topicPolicies: new Map([
        [5, VISIBILITY.unmuted],
        [6, VISIBILITY.muted],
        [7, VISIBILITY.followed],
      ]),
      streamEmail: new Set([3, 4]),
    });
    expect(notices).toEqual([
      { userId: 2, triggers: ["mentioned"] },
      { userId: 3, triggers: ["stream_wildcard_mentioned", "stream_email_notify"] },
      { userId: 5, triggers: ["stream_wildcard_mentioned"] },
      { userId: 7, triggers: ["followed_topic_email_notify"] },
    ]);
  });

  it("a plain channel message notifies nobody by default", () => {
    expect(emailNoticesOf({ ...base, entries: [{ userId: 2, flags: 0 }] })).toEqual([]);
  });
});

describe("passingTrigger", () => {
  const on = emailSettingsOf({});
  it("the first trigger the settings let through", () => {
    expect(passingTrigger(["private_message"], on, null)).toBe("private_message");
    expect(passingTrigger(["private_message"], { ...on, enableOfflineEmail: false }, null)).toBeNull();
    expect(passingTrigger(["stream_wildcard_mentioned", "stream_email_notify"], { ...on, wildcardMentionsNotify: false, enableStreamEmail: true }, null)).toBe(
      "stream_email_notify",
    );
    expect(passingTrigger(["stream_email_notify"], on, null)).toBeNull();
    expect(passingTrigger(["stream_email_notify"], on, { emailNotifications: true, wildcardMentionsNotify: null })).toBe("stream_email_notify");
    expect(passingTrigger(["stream_wildcard_mentioned"], on, { emailNotifications: null, wildcardMentionsNotify: false })).toBeNull();
  });
});

it("wasAway: no activity within the offline threshold before the message, nor since", () => {
  const sent = new Date("2024-05-01T10:00:00Z");
  expect(wasAway(null, sent)).toBe(true);
  expect(wasAway(new Date("2024-05-01T09:50:00Z"), sent)).toBe(true);
  expect(wasAway(new Date("2024-05-01T09:59:00Z"), sent)).toBe(false);
  expect(wasAway(new Date("2024-05-01T10:01:00Z"), sent)).toBe(false);
});

describe("the mail", () => {
  const url = "https://chat.example.com";
  it("names and links conversations as Zulip does", () => {
    const dm = { kind: "private" as const, others: [{ id: 12, fullName: 'Ada "A" Lovelace' }] };
    expect(conversationUrl(url, dm)).toBe("https://chat.example.com/#narrow/dm/12-Ada-A-Lovelace");
    const group = { kind: "private" as const, others: [{ id: 9, fullName: "Bo" }, { id: 3, fullName: "Cy" }, { id: 4, fullName: "Di" }] };
    expect(conversationUrl(url, group)).toBe("https://chat.example.com/#narrow/dm/3,4,9-group");
    const topic = { kind: "stream" as const, streamId: 7, streamName: "design team", topic: "v1.0 launch" };
    expect(conversationUrl(url, topic)).toBe("https://chat.example.com/#narrow/channel/7-design-team/topic/v1.2E0.20launch");
    const subject = (conversation: typeof dm | typeof group | typeof topic, realmNameInSubject = false) =>
      mailSubject({ conversation, realmName: "Acme", realmNameInSubject, messages: [] });
    expect(subject(dm)).toBe('DMs with Ada "A" Lovelace');
    expect(subject(group)).toBe("Group DMs with Bo, Cy, and Di");
    expect(subject(topic, true)).toBe("[Acme] #design team > v1.0 launch");
  });

  const message = { id: 1, senderId: 12, senderName: "Ada", sentAt: new Date("2024-05-01T10:00:00Z"), trigger: "private_message" as const };
  it("lists each message's sender, time and text, with the link", () => {
    const { text } = missedMessageMail({
      realmName: "Acme",
      realmUrl: url,
      realmNameInSubject: false,
      conversation: { kind: "private", others: [{ id: 12, fullName: "Ada" }] },
      messages: [
        { ...message, renderedContent: "<p>Hello <strong>there</strong></p>" },
        { ...message, id: 2, renderedContent: '<p>See <a href="/user_uploads/1/a.png">a.png</a></p>' },
      ],
      contentHiddenBy: null,
      timezone: "Europe/Berlin",
    });
    expect(text).toContain("Ada (May 1, 2024, 12:00 PM GMT+2):\nHello there\n");
    expect(text).toContain("See a.png (https://chat.example.com/user_uploads/1/a.png)");
    expect(text).toContain("https://chat.example.com/#narrow/dm/12-Ada");
  });

  it("without content when a setting hides it", () => {
    const { text } = missedMessageMail({
      realmName: "Acme",
      realmUrl: url,
      realmNameInSubject: false,
      conversation: { kind: "private", others: [{ id: 12, fullName: "Ada" }] },
      messages: [{ ...message, renderedContent: "<p>secret</p>" }],
      contentHiddenBy: "user",
      timezone: "",
    });
    expect(text).not.toContain("secret");
    expect(text).toContain("You have 1 new message from Ada.");
  });

  it("htmlToText keeps blocks, lists, quotes and code", () => {
    const html = "<p>one<br>two</p><ul><li>a</li><li>b</li></ul><blockquote><p>quoted</p></blockquote><pre><code>x  = 1\ny</code></pre>";
    expect(htmlToText(html, url)).toBe("one\ntwo\n\n- a\n\n- b\n\n> quoted\n\nx  = 1\ny");
  });
});
