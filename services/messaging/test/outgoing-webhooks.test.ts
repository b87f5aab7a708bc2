import http from "node:http";
import type { AddressInfo } from "node:net";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverNext } from "../src/actions/outgoing-webhooks";
import { isPrivateAddress } from "../src/lib/egress";
import { claimDelivery } from "../src/store/outgoing-webhooks";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Outgoing webhook deliveries in messaging, with the test's clock: written with the message that
 * triggers the bot, delivered by whichever process claims them, and taken over from a process
 * that died holding one once its lease ran out. (The whole flow through the gateway is in
 * outgoing-webhooks-e2e.test.ts.)
 */

let m: Messaging;
let org: Org;
let server: http.Server;
let hookUrl = "";
const received: any[] = [];
/** How the bot's server answers: a body and its Content-Type, or "endless" (it never stops sending). */
type Answer = { body: string | Buffer; contentType: string } | "endless";
const NOT_REQUIRED: Answer = { body: JSON.stringify({ response_not_required: true }), contentType: "application/json" };
let answer: Answer = NOT_REQUIRED;
/** Bytes the endless answer got written before the reader hung up. */
let endlessWritten = 0;
// The bot's server here is on this host: a private address, allowed but in the test that refuses it.
const CONFIG = { OUTGOING_WEBHOOK_TIMEOUT_SECONDS: 5, OUTGOING_WEBHOOK_RETRY_MS: 1000, OUTGOING_WEBHOOK_PRIVATE_ADDRESSES: true };
let bot: { id: number; name: string };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      if (answer !== "endless") {
        res.writeHead(200, { "content-type": answer.contentType }).end(answer.body);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, " ");
      endlessWritten = 0;
      const more = () => {
        while (!res.destroyed && res.write(chunk)) endlessWritten += chunk.length;
      };
      res.on("drain", more);
      more();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  m = await startMessaging();
  org = await m.createOrg();
  await m.createStream(org.owner, "hooks", [org.owner, org.member]);
  // Mentions name the bot with its id: this harness's user replica learns of new users by id only.
  const accounts = serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN);
  const made = await m.ok(await accounts("POST", "/bots", { as: org.member.as, params: { full_name: "Hook Bot", short_name: "hook", bot_type: 3, payload_url: JSON.stringify(hookUrl) } }));
  bot = { id: made.user_id, name: "Hook Bot" };
});
afterAll(async () => {
  await m?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

const pending = async () => (await m.deps.pool.query("SELECT count(*)::int AS n FROM outgoing_webhook_deliveries")).rows[0].n as number;

describe("outgoing webhook deliveries", () => {
  it("are written with a message that mentions the bot, and only then", async () => {
    await m.send(org.member, { type: "stream", to: "hooks", topic: "t", content: "no mention here" });
    await m.send(org.member, { type: "stream", to: "hooks", topic: "t", content: `@_**${bot.name}|${bot.id}** silently` });
    expect(await pending()).toBe(0);
    await m.send(org.member, { type: "stream", to: "hooks", topic: "t", content: `@**${bot.name}|${bot.id}** hello` });
    expect(await pending()).toBe(1);
    expect(await deliverNext(m.deps, CONFIG)).toBe(true);
    expect(received.at(-1)).toMatchObject({ trigger: "mention", data: `@**${bot.name}|${bot.id}** hello` });
    expect(await pending()).toBe(0);
    expect(await deliverNext(m.deps, CONFIG)).toBe(false);
  });

  it("one held by a process that died is delivered by another once its lease has run out", async () => {
    const before = received.length;
    await m.send(org.member, { type: "stream", to: "hooks", topic: "t", content: `@**${bot.name}|${bot.id}** are you there?` });
    // A process claims it and dies before sending anything.
    expect(await claimDelivery(m.deps.pool, m.clock.now(), new Date(0))).not.toBeNull();
    expect(await deliverNext(m.deps, CONFIG)).toBe(false);
    m.clock.advance(64_000);
    expect(await deliverNext(m.deps, CONFIG)).toBe(false);
    m.clock.advance(2_000);
    expect(await deliverNext(m.deps, CONFIG)).toBe(true);
    expect(received.slice(before).map((r) => r.data)).toEqual([`@**${bot.name}|${bot.id}** are you there?`]);
    expect(await pending()).toBe(0);
  });

  it("one whose processes kept dying holding it is given up after as many tries as a delivery gets", async () => {
    const before = received.length;
    await m.send(org.member, { type: "stream", to: "hooks", topic: "t", content: `@**${bot.name}|${bot.id}** doomed` });
    for (let i = 0; i < 4; i++) {
      expect(await claimDelivery(m.deps.pool, m.clock.now(), m.clock.now())).not.toBeNull();
      m.clock.advance(66_000);
    }
    expect(await deliverNext(m.deps, CONFIG)).toBe(true);
    expect(received.length).toBe(before);
    expect(await pending()).toBe(0);
  });

  it("a payload URL on a private address is refused unless the operator allows it, as Zulip's egress proxy refuses it", async () => {
    const before = received.length;
    const sent = await m.send(org.member, { type: "stream", to: "hooks", topic: "private", content: `@**${bot.name}|${bot.id}** inside?` });
    expect(await deliverNext(m.deps, { ...CONFIG, OUTGOING_WEBHOOK_PRIVATE_ADDRESSES: false })).toBe(true);
    expect(received.length).toBe(before);
    const narrow = JSON.stringify([{ operator: "channel", operand: "hooks" }, { operator: "topic", operand: "private" }]);
    const page = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 5, num_after: 0, narrow, apply_markdown: false }));
    expect(page.messages.map((x: any) => [x.sender_id, x.content])).toEqual([
      [org.member.user_id, `@**${bot.name}|${bot.id}** inside?`],
      [bot.id, "Failure! Third party responded with 407"],
    ]);
    const dm = JSON.stringify([{ operator: "dm", operand: [bot.id] }]);
    const told = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 1, num_after: 0, narrow: dm, apply_markdown: false }));
    expect(told.messages[0].content).toMatch(new RegExp(`/near/${sent}\\) to your bot @_\\*\\*Hook Bot\\*\\* triggered an outgoing webhook\\.\\nThe URL configured for the webhook is for a private or disallowed network\\.$`));
  });

  it("private, loopback, link-local and reserved addresses are private; public ones are not", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fd00::1", "fe80::1", "::ffff:10.0.0.1", "not an address",
      // IPv6 spellings that carry an IPv4 address or go nowhere: old IPv4-compatible, SIIT, Teredo, discard.
      "::127.0.0.1", "::ffff:0:7f00:1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "100::1", "64:ff9b::a9fe:a9fe"]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) expect(isPrivateAddress(a), a).toBe(false);
  });
});

describe("an outgoing webhook bot's answer", () => {
  /** Has the bot asked in `topic`, answered with `a`; the bot's messages there afterwards. */
  async function answered(topic: string, a: Answer): Promise<string[]> {
    answer = a;
    try {
      await m.send(org.member, { type: "stream", to: "hooks", topic, content: `@**${bot.name}|${bot.id}** hi` });
      expect(await deliverNext(m.deps, CONFIG)).toBe(true);
    } finally {
      answer = NOT_REQUIRED;
    }
    expect(await pending()).toBe(0);
    const narrow = JSON.stringify([{ operator: "channel", operand: "hooks" }, { operator: "topic", operand: topic }]);
    const page = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 5, num_after: 0, narrow, apply_markdown: false }));
    return page.messages.filter((x: any) => x.sender_id === bot.id).map((x: any) => x.content);
  }
  const json = (value: unknown): Answer => ({ body: JSON.stringify(value), contentType: "application/json" });

  it("`response_not_required: true` wants no reply, even with content", async () => {
    expect(await answered("not-required", json({ response_not_required: true, content: "ignored" }))).toEqual([]);
  });

  it("`response_string`, the older key, is the reply's content; `content` wins when both are there", async () => {
    expect(await answered("legacy", json({ response_string: "old style" }))).toEqual(["old style"]);
    expect(await answered("both", json({ response_string: "old style", content: "new style" }))).toEqual(["new style"]);
  });

  it("a content that is not a string is posted as its JSON text", async () => {
    expect(await answered("number", json({ content: 42 }))).toEqual(["42"]);
    expect(await answered("legacy-object", json({ response_string: { a: 1 } }))).toEqual(['{"a":1}']);
  });

  it("`widget_content` gives the reply a zform, as a JSON string or an object; an invalid one fails with Zulip's complaint", async () => {
    const zform = {
      widget_type: "zform",
      extra_data: { type: "choices", heading: "Pick one", choices: [{ type: "multiple_choice", short_name: "A", long_name: "Apples", reply: "answer A" }] },
    };
    /** The bot's newest message in `topic` with its submessages. */
    const newest = async (topic: string) => {
      const narrow = JSON.stringify([{ operator: "channel", operand: "hooks" }, { operator: "topic", operand: topic }]);
      const page = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 1, num_after: 0, narrow }));
      return page.messages[0];
    };
    expect(await answered("zform-string", json({ content: "Quiz time", widget_content: JSON.stringify(zform) }))).toEqual(["Quiz time"]);
    const asString = await newest("zform-string");
    expect(asString.submessages).toEqual([expect.objectContaining({ msg_type: "widget", sender_id: bot.id, content: JSON.stringify(zform) })]);
    expect(await answered("zform-object", json({ content: "Quiz again", widget_content: zform }))).toEqual(["Quiz again"]);
    expect((await newest("zform-object")).submessages.map((s: any) => JSON.parse(s.content))).toEqual([zform]);
    // Not beside the older key, as Zulip reads it; nor without content.
    expect(await answered("zform-legacy", json({ response_string: "plain", widget_content: zform }))).toEqual(["plain"]);
    expect((await newest("zform-legacy")).submessages).toEqual([]);

    const poll = { widget_type: "poll", extra_data: { question: "Q?", options: [] } };
    expect(await answered("zform-poll", json({ content: "x", widget_content: poll }))).toEqual(["Failure! Widgets: unknown widget type: poll"]);
    expect(await answered("zform-bad-json", json({ content: "x", widget_content: "{not json" }))).toEqual([
      "Failure! Widgets: API programmer sent invalid JSON content",
    ]);
    const noReply = { ...zform, extra_data: { ...zform.extra_data, choices: [{ short_name: "A", long_name: "Apples" }] } };
    expect(await answered("zform-no-reply", json({ content: "x", widget_content: noReply }))).toEqual([
      'Failure! Widgets: extra_data["choices"][0]["reply"] is not a string',
    ]);
  });

  it("is decoded with the charset its Content-Type names, and as UTF-8 when it names none TextDecoder knows", async () => {
    const latin1 = Buffer.from('{"content":"café"}', "latin1"); // é is the one byte 0xE9
    expect(await answered("latin1", { body: latin1, contentType: "application/json; charset=ISO-8859-1" })).toEqual(["café"]);
    // 日本 in Shift_JIS, the label quoted and in capitals.
    const sjis = Buffer.concat([Buffer.from('{"content":"'), Buffer.from([0x93, 0xfa, 0x96, 0x7b]), Buffer.from('"}')]);
    expect(await answered("sjis", { body: sjis, contentType: 'application/json; Charset="Shift_JIS"' })).toEqual(["日本"]);
    const utf8 = Buffer.from(JSON.stringify({ content: "naïve" }), "utf8");
    expect(await answered("unknown-charset", { body: utf8, contentType: "application/json; charset=no-such-charset" })).toEqual(["naïve"]);
    expect(await answered("no-charset", { body: utf8, contentType: "application/json" })).toEqual(["naïve"]);
  });

  it("is read up to 1 MiB; past that it is not read on, and the failure is told in the topic and to the bot's owner", async () => {
    const reply = JSON.stringify({ content: "just fits" });
    expect(await answered("fits", { body: reply + " ".repeat(1024 * 1024 - reply.length), contentType: "application/json" })).toEqual(["just fits"]);
    expect(await answered("too-large", { body: reply + " ".repeat(1024 * 1024 - reply.length + 1), contentType: "application/json" })).toEqual([
      "Failure! Response is larger than 1 MiB",
    ]);

    expect(await answered("endless", "endless")).toEqual(["Failure! Response is larger than 1 MiB"]);
    // The reader hung up soon after the cap (what is in flight in the socket's buffers aside).
    expect(endlessWritten).toBeLessThan(16 * 1024 * 1024);
    const dm = JSON.stringify([{ operator: "dm", operand: [bot.id] }]);
    const told = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 1, num_after: 0, narrow: dm, apply_markdown: false }));
    expect(told.messages[0].content).toMatch(/triggered an outgoing webhook\.\nThe webhook's response was larger than 1 MiB, and was not read\.$/);
  });
});
