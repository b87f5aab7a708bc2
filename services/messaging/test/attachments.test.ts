import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AttachmentEvent, linkedPathIds } from "@chat/contracts";
import { sanitizeFileName } from "../src/lib/upload-names";
import { friend, guest, outsider, owner, REALM, startAttachmentsHarness, stranger, T0, type AttachmentsHarness } from "./attachments-helpers";

let h: AttachmentsHarness;
beforeAll(async () => {
  h = await startAttachmentsHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  h.clock.set(T0);
  // TRUNCATE, since recipients refuse DELETE (messages refer to them without a foreign key).
  await h.pool.query("TRUNCATE attachment_messages, attachments, attachment_file_deletions, outbox, usermessages, messages, subscriptions, recipients, streams CASCADE");
  for (const e of await readdir(h.dir)) await rm(path.join(h.dir, e), { recursive: true, force: true });
});

async function uploadText(as = owner, name = "notes.txt", body = "hello file") {
  const res = await h.upload(as, [{ name, body }]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { url: string; uri: string; filename: string };
}
async function list(as = owner) {
  const res = await h.call("GET", "/attachments", { as });
  expect(res.status).toBe(200);
  return res.body as { attachments: any[]; upload_space_used: number };
}
async function filesOnDisk(): Promise<string[]> {
  const out: string[] = [];
  async function walk(d: string) {
    // A directory the storage removes while this walks (after deleting its last file) holds nothing.
    const entries = await readdir(d, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return [];
      throw err;
    });
    for (const e of entries) {
      if (e.name === ".tmp") continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(path.relative(h.dir, p));
    }
  }
  await walk(h.dir);
  return out.sort();
}

describe("POST /user_uploads", () => {
  it("stores the file, answers url/uri/filename and tells the owner", async () => {
    const res = await uploadText(owner, "My Notes (final).txt", "hello file");
    // The name as given; only the URL's last segment is cleaned.
    expect(res.filename).toBe("My Notes (final).txt");
    expect(res.url).toMatch(new RegExp(`^/user_uploads/${REALM}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/My-Notes-final\\.txt$`));
    expect(res.uri).toBe(res.url);
    const pathId = res.url.slice("/user_uploads/".length);
    expect(await filesOnDisk()).toEqual([pathId]);

    const { attachments, upload_space_used } = await list();
    expect(attachments).toEqual([{ id: expect.any(Number), name: "My Notes (final).txt", path_id: pathId, size: 10, create_time: T0.getTime(), messages: [] }]);
    expect(upload_space_used).toBe(10);
    const events = await h.events("messaging.attachment.uploaded");
    expect(events).toHaveLength(1);
    expect(events[0].payload.client).toEqual({
      event: { type: "attachment", op: "add", attachment: attachments[0], upload_space_used: 10 },
      users: [owner.userId],
    });
    expect(AttachmentEvent.parse(events[0].payload.client.event)).toBeTruthy();
  });

  it("keeps non-ASCII names, escaped in the URL", async () => {
    const res = await uploadText(owner, "résumé été.pdf");
    expect(res.filename).toBe("résumé été.pdf");
    expect(res.url.endsWith(`/${encodeURIComponent("résumé-été.pdf")}`)).toBe(true);
    const dl = await h.download(owner, res.url);
    expect(dl.status).toBe(200);
  });

  it("accepts any field name and ignores text fields", async () => {
    const res = await h.upload(owner, [{ name: "a.txt", body: "x", field: "filename" }], { note: "hi" });
    expect(res.status).toBe(200);
  });

  it("refuses no file, two files, and a non-multipart body, storing nothing", async () => {
    const none = await h.upload(owner, [], { a: "b" });
    expect(none.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "You must specify a file to upload" });
    const two = await h.upload(owner, [{ name: "a.txt", body: "a" }, { name: "b.txt", body: "b" }]);
    expect(two.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "You may only upload one file at a time" });
    const three = await h.upload(owner, [{ name: "a.txt", body: "a" }, { name: "b.txt", body: "b" }, { name: "c.txt", body: "c" }]);
    expect(three.body).toMatchObject({ code: "BAD_REQUEST", msg: "You may only upload one file at a time" });
    const form = await h.call("POST", "/user_uploads", { as: owner, params: { file: "not a file" } });
    expect(form.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "You must specify a file to upload" });
    expect((await list()).attachments).toEqual([]);
    expect(await filesOnDisk()).toEqual([]);
    expect(await h.events()).toEqual([]);
  });

  it("accepts an upload larger than the form body limit (it is streamed)", async () => {
    const big = Buffer.alloc(12 * 1024 * 1024, 7);
    const res = await h.upload(owner, [{ name: "big.bin", body: big, type: "application/octet-stream" }]);
    expect(res.status).toBe(200);
    const [only] = await filesOnDisk();
    expect((await stat(path.join(h.dir, only))).size).toBe(big.length);
    expect((await list()).attachments[0].size).toBe(big.length);
  });

  it("requires authentication", async () => {
    const res = await h.call("POST", "/user_uploads", { as: null });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHORIZED");
  });
});

describe("size limit", () => {
  it("refuses a file over the configured limit and keeps nothing", async () => {
    const small = await startAttachmentsHarness({ maxUploadBytes: 1024 });
    try {
      const ok = await small.upload(owner, [{ name: "fits.txt", body: "x".repeat(1024) }]);
      expect(ok.status).toBe(200);
      const res = await small.upload(owner, [{ name: "big.txt", body: "x".repeat(1025) }]);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Uploaded file is larger than the allowed limit of 0.000977 MiB" });
      const { rows } = await small.pool.query("SELECT file_name FROM attachments");
      expect(rows).toEqual([{ file_name: "fits.txt" }]);
      const files = await readdir(small.dir, { recursive: true, withFileTypes: true });
      expect(files.filter((f) => f.isFile()).map((f) => f.name)).toEqual(["fits.txt"]);
    } finally {
      await small.close();
    }
  });
});

describe("download", () => {
  it("serves the bytes to the uploader with safe headers", async () => {
    const { url } = await uploadText(owner, "page.html", "<script>alert(1)</script>");
    const res = await h.download(owner, url);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("<script>alert(1)</script>");
    // Whatever type the part gave, an HTML upload never renders as a page:
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(String(res.headers["content-security-policy"])).toContain("sandbox");
    expect(res.headers["content-length"]).toBe("25");
  });

  it("serves byte ranges: 206 with Content-Range, 416 past the end, the whole file otherwise", async () => {
    const { url } = await uploadText(owner, "clip.txt", "0123456789");
    const get = (headers: Record<string, string>) => h.download(owner, url, headers);
    const part = await get({ range: "bytes=2-5" });
    expect(part.status).toBe(206);
    expect(part.body.toString()).toBe("2345");
    expect(part.headers).toMatchObject({ "content-range": "bytes 2-5/10", "content-length": "4", "accept-ranges": "bytes" });
    const suffix = await get({ range: "bytes=-3" });
    expect([suffix.status, suffix.body.toString(), suffix.headers["content-range"]]).toEqual([206, "789", "bytes 7-9/10"]);
    const past = await get({ range: "bytes=10-" });
    expect(past.status).toBe(416);
    expect(past.headers["content-range"]).toBe("bytes */10");
    expect(JSON.parse(past.body.toString())).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    // Several ranges, or an If-Range we cannot check, get the whole file.
    const wholes: Array<Record<string, string>> = [{ range: "bytes=0-1,4-5" }, { range: "bytes=0-1", "if-range": '"x"' }];
    for (const headers of wholes) {
      const whole = await get(headers);
      expect([whole.status, whole.body.toString(), whole.headers["accept-ranges"]]).toEqual([200, "0123456789", "bytes"]);
    }
    // Someone who may not see the file learns nothing from a range either.
    expect((await h.download(stranger, url, { range: "bytes=0-1" })).status).toBe(404);
  });

  it("makes active content a download", async () => {
    const res = await h.upload(owner, [{ name: "x.html", body: "<b>hi</b>", type: "text/html" }]);
    const dl = await h.download(owner, res.body.url);
    expect(dl.headers["content-type"]).toBe("text/html");
    expect(String(dl.headers["content-disposition"])).toMatch(/^attachment; filename\*=UTF-8''x\.html$/);
  });

  it("refuses everyone else before the file is linked, identically to a missing file", async () => {
    const { url } = await uploadText();
    const missing = await h.download(owner, url.replace(/\/[^/]+$/, "/nope.txt"));
    expect(missing.status).toBe(404);
    for (const who of [friend, stranger, guest, outsider]) {
      const res = await h.download(who, url);
      expect(res.status, `user ${who.userId}`).toBe(404);
      expect(JSON.parse(res.body.toString())).toEqual(JSON.parse(missing.body.toString()));
    }
  });

  it("lets recipients of a direct message that links it see it, and nobody else", async () => {
    const { url } = await uploadText();
    await h.sendDirect(owner, [friend.userId], `see [notes](${url})`);
    expect((await h.download(friend, url)).status).toBe(200);
    expect((await h.download(stranger, url)).status).toBe(404);
  });

  it("lets members see files in public channels, but not guests who are not subscribed", async () => {
    const { url } = await uploadText();
    await h.sendToChannel(owner, `[file](${url})`);
    expect((await h.download(stranger, url)).status).toBe(200);
    expect((await h.download(guest, url)).status).toBe(404);
    expect((await h.download(outsider, url)).status).toBe(404);
  });

  it("private channels: subscribers with shared history yes, others no", async () => {
    const { url } = await uploadText();
    await h.sendToChannel(owner, `[file](${url})`, { inviteOnly: true, subscribers: [friend.userId, guest.userId] });
    expect((await h.download(friend, url)).status).toBe(200);
    expect((await h.download(guest, url)).status).toBe(200);
    expect((await h.download(stranger, url)).status).toBe(404);
  });

  it("answers 404 for another organization's realm id in the URL", async () => {
    const { url } = await uploadText();
    const otherRealmUrl = url.replace(`/user_uploads/${REALM}/`, `/user_uploads/${REALM + 1}/`);
    expect((await h.download(owner, otherRealmUrl)).status).toBe(404);
  });
});

describe("claiming by messages", () => {
  it("records the message in the attachment, with an update event to the owner", async () => {
    const { url } = await uploadText();
    await h.pool.query("DELETE FROM outbox");
    h.clock.advance(5000);
    const messageId = await h.sendDirect(owner, [friend.userId], `http://chat.example.com${url} and again ${url}`);
    const [att] = (await list()).attachments;
    expect(att.messages).toEqual([{ id: messageId, date_sent: T0.getTime() + 5000 }]);
    const events = await h.events("messaging.attachment.updated");
    expect(events.map((e) => e.payload.client)).toEqual([
      { event: { type: "attachment", op: "update", attachment: att, upload_space_used: 10 }, users: [owner.userId] },
    ]);
  });

  it("lets someone who can see the file reshare it, but not someone who cannot", async () => {
    const { url } = await uploadText();
    // The stranger cannot see it: their message does not claim it (and gives them no access).
    await h.sendDirect(stranger, [friend.userId], `stolen ${url}`);
    expect((await list()).attachments[0].messages).toEqual([]);
    expect((await h.download(friend, url)).status).toBe(404);
    // The friend received it and can pass it on.
    await h.sendDirect(owner, [friend.userId], url);
    const reshared = await h.sendDirect(friend, [stranger.userId], url);
    expect((await list()).attachments[0].messages.map((m: any) => m.id)).toContain(reshared);
    expect((await h.download(stranger, url)).status).toBe(200);
  });

  it("ignores links of another organization", async () => {
    const { url } = await uploadText();
    const foreign = url.replace(`/user_uploads/${REALM}/`, `/user_uploads/${REALM + 1}/`);
    await h.sendDirect(owner, [friend.userId], foreign);
    expect((await list()).attachments[0].messages).toEqual([]);
  });
});

describe("DELETE /attachments/{id}", () => {
  it("deletes the row and the file, with a remove event", async () => {
    const { url } = await uploadText();
    const [att] = (await list()).attachments;
    await h.pool.query("DELETE FROM outbox");
    const res = await h.call("DELETE", `/attachments/${att.id}`, { as: owner });
    expect(res.body).toEqual({ result: "success", msg: "" });
    expect((await list()).attachments).toEqual([]);
    expect(await filesOnDisk()).toEqual([]);
    expect((await h.download(owner, url)).status).toBe(404);
    const events = await h.events("messaging.attachment.deleted");
    expect(events.map((e) => e.payload)).toEqual([
      {
        attachment_id: att.id,
        owner_id: owner.userId,
        reason: "owner",
        client: { event: { type: "attachment", op: "remove", attachment: { id: att.id }, upload_space_used: 0 }, users: [owner.userId] },
      },
    ]);
  });

  it("refuses another user's, another organization's, a missing or a malformed id", async () => {
    await uploadText();
    const [att] = (await list()).attachments;
    for (const [id, as] of [[att.id, friend], [att.id, outsider], [att.id + 999, owner]] as const) {
      const res = await h.call("DELETE", `/attachments/${id}`, { as });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Invalid attachment" });
    }
    expect((await h.call("DELETE", "/attachments/xyz", { as: owner })).body.code).toBe("BAD_REQUEST");
    expect((await list()).attachments).toHaveLength(1);
    expect(await filesOnDisk()).toHaveLength(1);
  });
});

describe("automatic deletion", () => {
  it("deletes an upload with the last message linking it, not before", async () => {
    const { url } = await uploadText();
    const m1 = await h.sendDirect(owner, [friend.userId], url);
    const m2 = await h.sendToChannel(owner, url);
    await h.pool.query("DELETE FROM outbox");

    await h.deleteMessages([m1]);
    const [att] = (await list()).attachments;
    expect(att.messages.map((m: any) => m.id)).toEqual([m2]);
    expect((await h.events("messaging.attachment.updated")).map((e) => e.payload.client.event.attachment)).toEqual([att]);

    await h.deleteMessages([m2]);
    expect((await list()).attachments).toEqual([]);
    const removed = await h.events("messaging.attachment.deleted");
    expect(removed.map((e) => [e.payload.attachment_id, e.payload.reason])).toEqual([[att.id, "unreferenced"]]);
    // The file goes right after the deleting transaction commits.
    for (let i = 0; i < 50 && (await filesOnDisk()).length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await filesOnDisk()).toEqual([]);
  });

  it("cleans up uploads never used after the retention period, keeping used and recent ones", async () => {
    const unused = await uploadText(owner, "unused.txt");
    const used = await uploadText(owner, "used.txt");
    await h.sendDirect(owner, [friend.userId], used.url);
    h.clock.advance(20 * 86_400_000);
    const recent = await uploadText(owner, "recent.txt");
    await h.pool.query("DELETE FROM outbox");

    const cutoff = Math.floor(h.clock.now().getTime() / 1000) - 10 * 86_400;
    const res = await h.call("POST", "/internal/attachments/clean_up", { params: { uploaded_before: cutoff } });
    expect(res.body).toEqual({ result: "success", msg: "", deleted: 1, files_removed: 1 });
    expect((await list()).attachments.map((a) => a.name).sort()).toEqual(["recent.txt", "used.txt"]);
    expect((await h.download(owner, unused.url)).status).toBe(404);
    expect((await h.download(owner, recent.url)).status).toBe(200);
    const removed = await h.events("messaging.attachment.deleted");
    expect(removed.map((e) => e.payload.reason)).toEqual(["unclaimed"]);
    // Idempotent: nothing more to do.
    const again = await h.call("POST", "/internal/attachments/clean_up", { params: { uploaded_before: cutoff } });
    expect(again.body).toMatchObject({ deleted: 0, files_removed: 0 });
  });

  it("keeps the uploads it is told pending scheduled messages link", async () => {
    const scheduled = await uploadText(owner, "for-later.txt");
    const unused = await uploadText(owner, "really-unused.txt");
    h.clock.advance(86_400_000);
    const cutoff = Math.floor(h.clock.now().getTime() / 1000);
    const keep = JSON.stringify(linkedPathIds(scheduled.url));
    const res = await h.call("POST", "/internal/attachments/clean_up", { params: { uploaded_before: cutoff, keep } });
    expect(res.body).toMatchObject({ deleted: 1 });
    expect((await h.download(owner, unused.url)).status).toBe(404);
    expect((await h.download(owner, scheduled.url)).status).toBe(200);
    await h.call("POST", "/internal/attachments/clean_up", { params: { uploaded_before: cutoff } });
  });

  it("treats links from messages deleted without the hook as gone", async () => {
    const { url } = await uploadText(owner, "orphan.txt");
    const id = await h.sendDirect(owner, [friend.userId], url);
    await h.pool.query("DELETE FROM messages WHERE id = $1", [id]); // e.g. an older retention job
    h.clock.advance(86_400_000);
    const res = await h.call("POST", "/internal/attachments/clean_up", { params: { uploaded_before: Math.floor(h.clock.now().getTime() / 1000) } });
    expect(res.body).toMatchObject({ deleted: 1, files_removed: 1 });
    expect((await list()).attachments).toEqual([]);
  });

  it("retries file removals left behind by a crash", async () => {
    await h.pool.query("INSERT INTO attachment_file_deletions (realm_id, path_id) VALUES ($1, $2)", [REALM, `${REALM}/ab/leftover/x.txt`]);
    const res = await h.call("POST", "/internal/attachments/clean_up", { params: { uploaded_before: 0 } });
    expect(res.body).toMatchObject({ deleted: 0, files_removed: 1 });
    const { rows } = await h.pool.query("SELECT count(*)::int AS n FROM attachment_file_deletions");
    expect(rows[0].n).toBe(0);
  });

  it("is internal only", async () => {
    const res = await h.call("POST", "/internal/attachments/clean_up", { as: owner, params: {}, headers: { "x-chat-internal-token": "wrong-token-value-123" } });
    expect(res.status).toBe(401);
  });
});

describe("helpers", () => {
  it("sanitizes file names like Zulip", () => {
    expect(sanitizeFileName("a b  c.txt")).toBe("a-b-c.txt");
    expect(sanitizeFileName("../../etc/passwd")).toBe("....etcpasswd");
    expect(sanitizeFileName("???")).toBe("uploaded-file");
    expect(sanitizeFileName("..")).toBe("uploaded-file");
  });
  it("finds upload links in content", () => {
    const id = "3/ab/abcdefghijklmnopqrstuvwx/a%20b.txt";
    expect(linkedPathIds(`[x](/user_uploads/${id}) https://h/user_uploads/${id}?x`)).toEqual(["3/ab/abcdefghijklmnopqrstuvwx/a b.txt"]);
  });
});
