import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoOrg2, DemoUser } from "@chat/testkit";
import { nextEvent, ok, refused, register, useDemoStack, waitForEvents, type EventQueue } from "@chat/testkit/e2e";
import { untar } from "./archive";

/**
 * Data exports as an organization administrator's client sees them through the gateway: the
 * request, the `realm_export` events while the export is made, the list, the archive at its
 * URL (no credentials, as Zulip's), and deletion; events go to the administrator whose list
 * changed, and other organizations see none of it.
 */

let org: DemoOrg;
let org2: DemoOrg2;
const e2e = useDemoStack({}, ({ demo }) => {
  [org, org2] = demo.orgs;
});
const as = (u: DemoUser) => e2e.as(u);

/** Reads `q` until its next event is `type` (the marker), failing on any `realm_export` before it. */
async function nextIsMarker(q: EventQueue, type: string) {
  expect((await nextEvent(q)).type).toBe(type);
}

describe("a data export through the gateway", () => {
  it("is asked for, made, listed, downloaded and deleted, with realm_export events to the administrator who acted", async () => {
    const { admin, owner, member } = org.users;
    const up = await e2e.postFile(member, "/user_uploads", { name: "plan.txt", type: "text/plain", data: "the public plan" });
    const secret = await e2e.postFile(member, "/user_uploads", { name: "secret.txt", type: "text/plain", data: "the private plan" });
    ok(await as(member).post("/messages", { type: "stream", to: org.channels.public.name, topic: "plans", content: `[plan](${up.body.url})` }));
    ok(await as(member).post("/messages", { type: "stream", to: org.channels.private.name, topic: "plans", content: `[secret](${secret.body.url})` }));

    const mine = await register(as(admin), { event_types: ["realm_export", "alert_words"] });
    const otherAdmin = await register(as(owner), { event_types: ["realm_export", "alert_words"] });
    const otherOrg = await register(as(org2.users.owner), { event_types: ["realm_export", "alert_words"] });

    const { id } = ok(await as(admin).post("/export/realm"));
    const [pending, made] = await waitForEvents(mine, 2, { timeoutMs: 30_000 });
    expect(pending).toMatchObject({ type: "realm_export", exports: [{ id, acting_user_id: admin.user_id, pending: true, export_url: null }] });
    expect(made.type).toBe("realm_export");
    const entry = made.exports.find((x: any) => x.id === id);
    expect(entry).toMatchObject({ pending: false, failed_timestamp: null, deleted_timestamp: null });
    expect(entry.export_url.startsWith(`${e2e.demo.base_url}/user_avatars/exports/${org.id}/`)).toBe(true);
    expect(ok(await as(owner).get("/export/realm")).exports).toEqual([entry]);
    refused(await as(member).get("/export/realm"), "Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
    refused(await as(member).post("/export/realm"), "Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");

    // The archive needs no credentials; it holds the public channel's message and upload only.
    const res = await fetch(entry.export_url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    const files = new Map([...(await untar(Buffer.from(await res.arrayBuffer())))].map(([name, bytes]) => [name, bytes.toString("utf8")]));
    const messages = JSON.parse(files.get("messages-000001.json")!).messages.map((x: any) => x.content);
    expect(messages).toContain(`[plan](${up.body.url})`);
    expect(messages.join("\n")).not.toContain("secret");
    const uploadName = `uploads/${up.body.url.replace(/^\/user_uploads\//, "")}`;
    expect(files.get(uploadName)).toBe("the public plan");
    expect([...files.values()].join("\n")).not.toContain("the private plan");
    expect(JSON.parse(files.get("realm.json")!).realm).toMatchObject({ id: org.id, name: org.name });

    // Another organization sees and deletes nothing of it.
    expect(ok(await as(org2.users.owner).get("/export/realm")).exports).toEqual([]);
    refused(await as(org2.users.owner).delete(`/export/realm/${id}`), "Invalid data export ID");

    // Deleting it tells the administrator who deleted it (their list changed), not the one who asked.
    ok(await as(owner).delete(`/export/realm/${id}`));
    const [deleted] = await waitForEvents(otherAdmin, 1);
    expect(deleted.exports.find((x: any) => x.id === id)).toMatchObject({ export_url: null, deleted_timestamp: expect.any(Number) });
    expect((await fetch(entry.export_url)).status).toBe(404);
    refused(await as(owner).delete(`/export/realm/${id}`), "Export already deleted");

    // Nothing else reached either administrator, and nothing the other organization.
    for (const [who, q] of [[admin, mine], [owner, otherAdmin], [org2.users.owner, otherOrg]] as const) {
      ok(await as(who).post("/users/me/alert_words", { alert_words: JSON.stringify(["marker"]) }));
      await nextIsMarker(q, "alert_words");
    }
  });

  it("an export URL that names no export, or another organization, finds nothing", async () => {
    for (const path of [`/user_avatars/exports/${org.id}/nothing/zulip-export-x.tar.gz`, `/user_avatars/exports/abc/t/f.tar.gz`]) {
      expect((await fetch(e2e.demo.base_url + path)).status).toBe(404);
    }
  });
});
