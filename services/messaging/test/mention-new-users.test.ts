import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * A mention by name of a user made a moment ago: messaging's replica of users follows accounts'
 * events a moment behind (this harness has no broker, so here it never catches up), and the name
 * is looked up in accounts instead of rendering as plain text.
 */

let m: Messaging;
let org: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  await m.createStream(org.owner, "mentions", [org.owner, org.member]);
});
afterAll(async () => m?.close());

const rendered = async (id: number) => (await m.ok(await m.call("GET", `/messages/${id}`, org.member))).message.content as string;

describe("mentions by name", () => {
  it("of a user the replica does not know yet are mentions", async () => {
    // The replica is filled with the organization as it was.
    const before = await m.send(org.member, { type: "stream", to: "mentions", topic: "t", content: `@**${org.owner.full_name}** hello` });
    expect(await rendered(before)).toContain(`data-user-id="${org.owner.user_id}"`);

    const newcomer = await org.extra(7);
    const id = await m.send(org.member, { type: "stream", to: "mentions", topic: "t", content: `@**${newcomer.full_name}** welcome` });
    expect(await rendered(id)).toContain(`<span class="user-mention" data-user-id="${newcomer.user_id}">@${newcomer.full_name}</span>`);
  });

  it("wildcards and unknown names stay what they were", async () => {
    const id = await m.send(org.member, { type: "stream", to: "mentions", topic: "t", content: "@**Nobody By This Name** and @**all**" });
    const html = await rendered(id);
    expect(html).toContain("@<strong>Nobody By This Name</strong>");
    expect(html).toContain('data-user-id="*"');
  });
});
