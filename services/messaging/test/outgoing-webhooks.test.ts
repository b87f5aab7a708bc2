import http from "node:http";
import type { AddressInfo } from "node:net";
import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverNext } from "../src/jobs/outgoing-webhooks";
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
const CONFIG = { OUTGOING_WEBHOOK_TIMEOUT_SECONDS: 5, OUTGOING_WEBHOOK_RETRY_MS: 1000 };
let bot: { id: number; name: string };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ response_not_required: true }));
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
});
