import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * GET /messages/matches_narrow: which of the given messages the user received match a narrow,
 * with the match fields GET /messages gives them (search highlights; otherwise the content and
 * the escaped topic as they are).
 */
let m: Messaging;
let org: Org;
let other: Org;
let coffee: number;
let tea: number;
let quoted: number;
let dm: number;
let secret: number;
let lounge: number;
let foreign: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  await m.createStream(org.owner, "general", [org.owner, org.member]);
  await m.createStream(org.owner, "secret", [org.owner], { invite_only: true });
  await m.createStream(org.owner, "lounge", [org.owner]);
  await m.createStream(other.owner, "theirs", [other.owner]);
  coffee = await m.send(org.owner, { type: "stream", to: "general", topic: "coffee & <tea>", content: "The **coffee** machine is broken" });
  tea = await m.send(org.owner, { type: "stream", to: "general", topic: "breaks", content: "tea at four" });
  quoted = await m.send(org.owner, { type: "stream", to: "general", topic: `it's "coffee" time`, content: "yes" });
  dm = await m.send(org.owner, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "coffee later?" });
  secret = await m.send(org.owner, { type: "stream", to: "secret", topic: "t", content: "secret coffee" });
  // A public channel the member is not subscribed to: readable through its history, not received.
  lounge = await m.send(org.owner, { type: "stream", to: "lounge", topic: "t", content: "lounge coffee" });
  foreign = await m.send(other.owner, { type: "stream", to: "theirs", topic: "t", content: "coffee abroad" });
});
afterAll(async () => m?.close());

const matches = (who: TestUser, msgIds: unknown, narrow: unknown) =>
  m.call("GET", "/messages/matches_narrow", who, { msg_ids: JSON.stringify(msgIds), narrow: JSON.stringify(narrow) });
const all = () => [coffee, tea, quoted, dm, secret, lounge, foreign];
const hl = (word: string) => `<span class="highlight">${word}</span>`;

describe("GET /messages/matches_narrow", () => {
  it("a search narrow: the matching messages the user received, with highlights as GET /messages has them", async () => {
    const res = await matches(org.member, all(), [{ operator: "search", operand: "coffee" }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      result: "success",
      msg: "",
      messages: {
        [coffee]: { match_content: `<p>The <strong>${hl("coffee")}</strong> machine is broken</p>`, match_subject: `${hl("coffee")} &amp; &lt;tea&gt;` },
        [quoted]: { match_content: "<p>yes</p>", match_subject: `it&#x27;s &quot;${hl("coffee")}&quot; time` },
        [dm]: { match_content: `<p>${hl("coffee")} later?</p>`, match_subject: "" },
      },
    });
    // The same highlights as the search through GET /messages.
    const fetched = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 10, narrow: JSON.stringify([["search", "coffee"]]) }));
    for (const message of fetched.messages) {
      expect(res.body.messages[message.id]).toEqual({ match_content: message.match_content, match_subject: message.match_subject });
    }
  });

  it("other narrows: the content and the escaped topic as they are", async () => {
    const res = await m.ok(await matches(org.member, all(), [{ operator: "channel", operand: "general" }]));
    expect(res.messages).toEqual({
      [coffee]: { match_content: "<p>The <strong>coffee</strong> machine is broken</p>", match_subject: "coffee &amp; &lt;tea&gt;" },
      [tea]: { match_content: "<p>tea at four</p>", match_subject: "breaks" },
      [quoted]: { match_content: "<p>yes</p>", match_subject: "it&#x27;s &quot;coffee&quot; time" },
    });
    const topic = await m.ok(await matches(org.member, all(), [["channel", "general"], ["topic", "BREAKS"]]));
    expect(Object.keys(topic.messages)).toEqual([String(tea)]);
    const dms = await m.ok(await matches(org.member, all(), [{ operator: "is", operand: "dm" }]));
    expect(dms.messages).toEqual({ [dm]: { match_content: "<p>coffee later?</p>", match_subject: "" } });
  });

  it("only messages the user received: not a private channel's, not one read only through channel history, not another organization's", async () => {
    const empty = await m.ok(await matches(org.member, all(), []));
    expect(Object.keys(empty.messages).map(Number).sort((a, b) => a - b)).toEqual([coffee, tea, quoted, dm]);
    // The owner received the lounge and secret messages; the other organization's stays out.
    const owner = await m.ok(await matches(org.owner, all(), [{ operator: "search", operand: "coffee" }]));
    expect(Object.keys(owner.messages).map(Number).sort((a, b) => a - b)).toEqual([coffee, quoted, dm, secret, lounge]);
    expect(await m.ok(await matches(other.owner, [coffee, foreign], []))).toMatchObject({ messages: { [foreign]: { match_content: "<p>coffee abroad</p>" } } });
    expect(Object.keys((await m.ok(await matches(other.owner, [coffee, foreign], []))).messages)).toEqual([String(foreign)]);
  });

  it("follows the user's flags, and answers nothing for no ids or unknown ones", async () => {
    await m.ok(await m.call("POST", "/messages/flags", org.member, { messages: JSON.stringify([tea]), op: "add", flag: "starred" }));
    expect(Object.keys((await m.ok(await matches(org.member, all(), [["is", "starred"]]))).messages)).toEqual([String(tea)]);
    expect(await m.ok(await matches(org.member, [], [["search", "coffee"]]))).toEqual({ result: "success", msg: "", messages: {} });
    expect((await m.ok(await matches(org.member, [999_999_999], []))).messages).toEqual({});
  });

  it("refuses bad input with Zulip's errors", async () => {
    expectError(await matches(org.member, [coffee], [{ operator: "channel", operand: "secret" }]), 400, "BAD_NARROW", "Invalid narrow operator: unknown channel secret");
    expectError(await matches(org.member, [coffee], [{ operator: "bogus", operand: "x" }]), 400, "BAD_NARROW", "Invalid narrow operator: unknown operator bogus");
    expectError(await m.call("GET", "/messages/matches_narrow", org.member, { narrow: "[]" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'msg_ids' argument");
    expectError(await m.call("GET", "/messages/matches_narrow", org.member, { msg_ids: `[${coffee}]` }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'narrow' argument");
    expectError(await m.call("GET", "/messages/matches_narrow", org.member, { msg_ids: "coffee", narrow: "[]" }), 400, "BAD_REQUEST", "msg_ids is not valid JSON");
  });
});
