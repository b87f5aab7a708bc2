import { describe, expect, it } from "vitest";
import type { DemoOrg } from "@chat/testkit";
import { ok, useDemoStack } from "@chat/testkit/e2e";

/**
 * The flows of the messaging issue end to end: real processes, the gateway, HTTP Basic auth
 * with the demo organization's credentials.
 */

let org: DemoOrg;
const e2e = useDemoStack({}, ({ demo }) => ([org] = demo.orgs));
type Who = keyof DemoOrg["users"];
const as = (who: Who) => e2e.as(org.users[who]);

async function fails(p: Promise<{ status: number; body: any }>, status: number, code: string, msg?: string) {
  const res = await p;
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(code);
  if (msg) expect(res.body.msg).toBe(msg);
}

describe("uploads through the gateway", () => {
  it("at the root the file; below /api/v1 a temporary URL that serves it without credentials", async () => {
    const up = await e2e.postFile(org.users.member, "/user_uploads", { name: "notes.txt", type: "text/plain", data: "meeting notes" });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const auth = { authorization: "Basic " + Buffer.from(`${org.users.member.email}:${org.users.member.api_key}`).toString("base64") };
    const base = e2e.demo.base_url;
    const file = await fetch(base + up.body.url, { headers: auth });
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("meeting notes");

    const apiForm = `${base}/api/v1${up.body.url}`;
    const temp = ok(await as("member").get(apiForm));
    expect(temp.url).toMatch(/^\/user_uploads\/temporary\/[A-Za-z0-9_.-]+\/notes\.txt$/);
    const anonymous = await fetch(base + temp.url);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await anonymous.text()).toBe("meeting notes");
    // The token names this file only: another name, or a token altered, finds nothing.
    expect((await fetch(base + temp.url.replace(/notes\.txt$/, "other.txt"))).status).toBe(404);
    expect((await fetch(base + temp.url.replace(/\.([A-Za-z0-9_-]{4})/, ".AAAA"))).status).toBe(404);
    // Only those who may read the file get a URL for it (member2 saw no message linking it).
    expect((await as("member2").get(apiForm)).status).toBe(404);
  });
});

describe("uploads as Zulip's Python client sends them", () => {
  it("a file part with a plain name and no Content-Type: the name kept, the type guessed, the times in whole seconds", async () => {
    const { member } = org.users;
    const authorization = "Basic " + Buffer.from(`${member.email}:${member.api_key}`).toString("base64");
    const body = '--B\r\nContent-Disposition: form-data; name="file"; filename="Chart (Q3) 2.png"\r\n\r\nnot really a png\r\n--B--\r\n';
    const res = await fetch(`${e2e.demo.base_url}/api/v1/user_uploads`, { method: "POST", headers: { authorization, "content-type": "multipart/form-data; boundary=B" }, body });
    const up = ok({ status: res.status, body: await res.json() });
    expect(up.filename).toBe("Chart (Q3) 2.png");
    expect(up.url).toMatch(/\/Chart-Q3-2\.png$/);
    const file = await fetch(e2e.demo.base_url + up.url, { headers: { authorization } });
    expect([file.status, file.headers.get("content-type")]).toEqual([200, "image/png"]);
    await file.arrayBuffer();

    const sent = ok(await as("member").post("/messages", { type: "stream", to: org.channels.public.name, topic: "files", content: `[${up.filename}](${up.url})` }));
    const { messages } = ok(await as("member").get("/messages", { message_ids: [sent.id] }));
    const { attachments } = ok(await as("member").get("/attachments"));
    const att = attachments.find((a: any) => `/user_uploads/${a.path_id}` === up.url);
    expect(att.name).toBe("Chart (Q3) 2.png");
    expect(att.create_time % 1000).toBe(0);
    expect(att.messages).toEqual([{ id: sent.id, date_sent: messages[0].timestamp * 1000 }]);
  });
});

describe("messaging through the gateway", () => {
  it("sends to a channel by name and by id, and reads it back with narrows", async () => {
    const pub = org.channels.public;
    const a = ok(await as("member").post("/messages", { type: "stream", to: pub.name, topic: "e2e", content: "by name" }));
    const b = ok(await as("member").post("/messages", { type: "channel", to: pub.stream_id, subject: "e2e", content: "by **id**" }));
    const res = ok(await as("owner").get("/messages", { anchor: "newest", num_before: 10, narrow: [{ operator: "channel", operand: pub.stream_id }, { operator: "topic", operand: "e2e" }] }));
    expect(res.messages.map((x: any) => x.id)).toEqual([a.id, b.id]);
    expect(res.messages[1].content).toBe("<p>by <strong>id</strong></p>");
    expect(res.found_newest).toBe(true);
    const search = ok(await as("member2").get("/messages", { anchor: "newest", num_before: 10, narrow: [["search", "name"]] }));
    expect(search.messages.map((x: any) => x.id)).toContain(a.id);
  });

  it("renders code, math and upload previews in the running service (its highlighting thread starts there)", async () => {
    const content = "```py\ndef f(): pass\n```\n$$x^2$$ [p.png](/user_uploads/1/ab/c/p.png)";
    const res = ok(await as("member").post("/messages/render", { content }));
    expect(res.rendered).toContain('<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="k">def</span> <span class="nf">f</span>');
    expect(res.rendered).toContain('<span class="katex">');
    expect(res.rendered).toContain('<div class="message_inline_image"><a href="/user_uploads/1/ab/c/p.png" title="p.png"><img src="/user_uploads/1/ab/c/p.png"></a></div>');
  });

  it("direct and group direct messages by ids and by emails", async () => {
    const { member, member2, admin } = org.users;
    const byIds = ok(await as("member").post("/messages", { type: "direct", to: [member2.user_id], content: "dm ids" }));
    const byEmails = ok(await as("member").post("/messages", { type: "private", to: [member2.email], content: "dm emails" }));
    const group = ok(await as("member").post("/messages", { type: "direct", to: [member2.user_id, admin.user_id], content: "group ids" }));
    const groupEmails = ok(await as("member").post("/messages", { type: "direct", to: `${member2.email},${admin.email}`, content: "group emails" }));
    const dms = ok(await as("member2").get("/messages", { anchor: "newest", num_before: 10, narrow: [["dm", member.email]] }));
    expect(dms.messages.map((x: any) => x.id)).toEqual([byIds.id, byEmails.id]);
    const groupRes = ok(await as("admin").get("/messages", { anchor: "newest", num_before: 10, narrow: [{ operator: "dm", operand: [member.user_id, member2.user_id] }] }));
    expect(groupRes.messages.map((x: any) => x.id)).toEqual([group.id, groupEmails.id]);
    await fails(as("member").post("/messages", { type: "direct", to: ["nobody@nowhere.invalid"], content: "x" }), 400, "BAD_REQUEST", "Invalid email 'nobody@nowhere.invalid'");
  });

  it("a private channel is invisible to a non-subscriber", async () => {
    const priv = org.channels.private;
    await fails(as("member2").post("/messages", { type: "stream", to: priv.name, topic: "t", content: "x" }), 400, "STREAM_DOES_NOT_EXIST");
    ok(await as("member").post("/messages", { type: "stream", to: priv.stream_id, topic: "t", content: "inside" }));
  });

  it("flags: read and starred", async () => {
    const sent = ok(await as("owner").post("/messages", { type: "stream", to: org.channels.public.name, topic: "flags", content: "star me" }));
    const read = ok(await as("member").post("/messages/flags", { messages: [sent.id], op: "add", flag: "read" }));
    expect(read.messages).toEqual([sent.id]);
    ok(await as("member").post("/messages/flags", { messages: [sent.id], op: "add", flag: "starred" }));
    const starred = ok(await as("member").get("/messages", { anchor: "newest", num_before: 5, narrow: [["is", "starred"]] }));
    expect(starred.messages.map((x: any) => [x.id, x.flags])).toEqual([[sent.id, ["read", "starred"]]]);
    await fails(as("member").post("/messages/flags", { messages: [sent.id], op: "add", flag: "mentioned" }), 400, "BAD_REQUEST", "Flag not editable: 'mentioned'");
  });

  it("deletion: refused for a member, done by an administrator", async () => {
    const sent = ok(await as("member").post("/messages", { type: "stream", to: org.channels.public.name, topic: "oops", content: "regret" }));
    await fails(as("member").delete(`/messages/${sent.id}`), 400, "BAD_REQUEST", "You don't have permission to delete this message");
    ok(await as("admin").delete(`/messages/${sent.id}`));
    await fails(as("member").get(`/messages/${sent.id}`), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  it("subscription settings", async () => {
    const pub = org.channels.public;
    ok(await as("member").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: pub.stream_id, property: "is_muted", value: true }, { stream_id: pub.stream_id, property: "color", value: "#123456" }] }));
    const subs = ok(await as("member").get("/users/me/subscriptions", { include_subscribers: true }));
    const sub = subs.subscriptions.find((s: any) => s.stream_id === pub.stream_id);
    expect(sub).toMatchObject({ is_muted: true, in_home_view: false, color: "#123456" });
    expect(sub.subscribers).toContain(org.users.member.user_id);
    await fails(as("member").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: pub.stream_id, property: "volume", value: 1 }] }), 400, "BAD_REQUEST");
  });

  it("unsubscribing others under each permission rule", async () => {
    const { member2, bot, guest } = org.users;
    const pub = org.channels.public.name;
    // A member may not remove another member...
    await fails(as("member").delete("/users/me/subscriptions", { subscriptions: [pub], principals: [member2.user_id] }), 400, "BAD_REQUEST", "Insufficient permission");
    // ...but may remove the bot they own.
    const botOut = ok(await as("member").delete("/users/me/subscriptions", { subscriptions: [pub], principals: [bot.user_id] }));
    expect(botOut.removed).toEqual([pub]);
    // An administrator may remove anyone (by email too); the default group is the administrators.
    const adminOut = ok(await as("admin").delete("/users/me/subscriptions", { subscriptions: [pub], principals: [guest.email] }));
    expect(adminOut.removed).toEqual([pub]);
    const again = ok(await as("admin").delete("/users/me/subscriptions", { subscriptions: [pub], principals: [guest.user_id] }));
    expect(again).toMatchObject({ removed: [], not_removed: [pub] });
    await fails(as("admin").delete("/users/me/subscriptions", { subscriptions: ["no such channel"] }), 400, "STREAM_DOES_NOT_EXIST");
    // Oneself, no principals.
    const self = ok(await as("member2").delete("/users/me/subscriptions", { subscriptions: [pub] }));
    expect(self.removed).toEqual([pub]);
  });

  it("drafts round trip", async () => {
    const created = ok(await as("member").post("/drafts", { drafts: [{ type: "stream", to: [org.channels.public.stream_id], topic: "later", content: "half-written" }] }));
    const [id] = created.ids;
    ok(await as("member").patch(`/drafts/${id}`, { draft: { type: "stream", to: [org.channels.public.stream_id], topic: "later", content: "finished" } }));
    const list = ok(await as("member").get("/drafts"));
    expect(list.drafts.find((d: any) => d.id === id)).toMatchObject({ content: "finished", topic: "later", type: "stream" });
    await fails(as("member2").delete(`/drafts/${id}`), 404, "BAD_REQUEST", "Draft does not exist");
    ok(await as("member").delete(`/drafts/${id}`));
    await fails(as("member").delete(`/drafts/${id}`), 404, "BAD_REQUEST", "Draft does not exist");
  });

  it("a linkifier added or removed applies to the very next message", async () => {
    const channel = org.channels.public.name;
    const send = async (content: string) => {
      const sent = ok(await as("member").post("/messages", { type: "stream", to: channel, topic: "links", content }));
      return ok(await as("member").get(`/messages/${sent.id}`)).message.content as string;
    };
    expect(await send("ticket T1")).toBe("<p>ticket T1</p>");
    const added = ok(await as("admin").post("/realm/filters", { pattern: "T(?P<id>[0-9]+)", url_template: "https://tickets.example/{id}" }));
    expect(await send("ticket T2")).toContain('href="https://tickets.example/2"');
    ok(await as("admin").delete(`/realm/filters/${added.id}`));
    expect(await send("ticket T3")).toBe("<p>ticket T3</p>");
  });

  it("message events reach each recipient's queue with their flags; local echo only in the named queue", async () => {
    const reg = async (who: Who) => ok(await as(who).post("/register", { event_types: ["message"], apply_markdown: true }));
    const senderQueue = await reg("member");
    const otherSenderQueue = await reg("member");
    const recipientQueue = await reg("member2");
    const sent = ok(
      await as("member").post("/messages", {
        type: "direct",
        to: [org.users.member2.user_id],
        content: "ping @**" + org.users.member2.full_name + "**",
        queue_id: senderQueue.queue_id,
        local_id: "42.01",
      }),
    );
    const poll = async (who: Who, q: { queue_id: string; last_event_id: number }) => {
      for (let i = 0; i < 50; i++) {
        const res = ok(await as(who).get("/events", { queue_id: q.queue_id, last_event_id: q.last_event_id, dont_block: true }));
        const msgs = res.events.filter((e: any) => e.type === "message");
        if (msgs.length) return msgs;
        await new Promise((r) => setTimeout(r, 100));
      }
      return [];
    };
    const [mine] = await poll("member", senderQueue);
    expect(mine.message.id).toBe(sent.id);
    expect(mine.local_message_id).toBe("42.01");
    expect(mine.flags).toEqual([]);
    const [twin] = await poll("member", otherSenderQueue);
    expect(twin.local_message_id).toBeUndefined();
    const [theirs] = await poll("member2", recipientQueue);
    expect(theirs.flags).toEqual(["mentioned"]);
    expect(theirs.message.content).toContain('class="user-mention"');
    expect(theirs.markdown_content).toBeUndefined();
  });
});
