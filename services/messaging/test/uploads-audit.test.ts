import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { identityHeaders, INTERNAL_HEADERS, type Identity } from "@chat/platform";
import { friend, owner, REALM, startAttachmentsHarness, stranger, T0, type AttachmentsHarness } from "./attachments-helpers";

/**
 * Uploads as Zulip's clients see them: the name an upload keeps, parts that name no file, the
 * type of a part that declared none, the times in attachment objects, and temporary URLs.
 */

let h: AttachmentsHarness;
beforeAll(async () => {
  h = await startAttachmentsHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  h.clock.set(T0);
  await h.pool.query("TRUNCATE attachment_messages, attachments, attachment_file_deletions, outbox, usermessages, messages, subscriptions, recipients, streams CASCADE");
  for (const e of await readdir(h.dir)) await rm(path.join(h.dir, e), { recursive: true, force: true });
});

const token = () => h.env.vars.INTERNAL_TOKEN;

/** A multipart body written by hand: parts with or without a file name or a Content-Type. */
async function uploadRaw(as: Identity, parts: Array<{ disposition: string; type?: string; body: string }>) {
  const chunks = parts.map((p) => `--XB\r\nContent-Disposition: form-data; ${p.disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ""}\r\n${p.body}\r\n`);
  const res = await h.app.inject({
    method: "POST",
    url: "/api/v1/user_uploads",
    headers: { ...identityHeaders(as, token()), "content-type": "multipart/form-data; boundary=XB" },
    payload: Buffer.from(chunks.join("") + "--XB--\r\n"),
  });
  return { status: res.statusCode, body: res.json() };
}

async function upload(name: string, body = "data", type?: string) {
  const res = await h.upload(owner, [{ name, body, type }]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { url: string; uri: string; filename: string };
}

async function attachments(as = owner) {
  const res = await h.call("GET", "/attachments", { as });
  expect(res.status).toBe(200);
  return res.body as { attachments: any[]; upload_space_used: number };
}

/** The temporary URL below /api/v1 (the gateway marks such requests). */
async function temporaryUrl(as: Identity, url: string) {
  const res = await h.app.inject({ method: "GET", url: `/api/v1${url}`, headers: { ...identityHeaders(as, token()), [INTERNAL_HEADERS.apiForm]: "1" } });
  return { status: res.statusCode, body: res.json() };
}

/** A URL fetched without credentials (as a browser opens a temporary URL). */
async function anonymous(url: string) {
  const res = await h.app.inject({ method: "GET", url: `/api/v1${url}`, headers: { [INTERNAL_HEADERS.token]: token() } });
  return { status: res.statusCode, body: res.rawPayload.toString(), headers: res.headers };
}

describe("the name of an upload", () => {
  it("is the name given, in the answer, the attachment and the download; only the URL's segment is cleaned", async () => {
    const res = await upload("My Report [final] (v2).pdf", "pdf bytes", "application/pdf");
    expect(res.filename).toBe("My Report [final] (v2).pdf");
    expect(res.url).toMatch(new RegExp(`^/user_uploads/${REALM}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/My-Report-final-v2\\.pdf$`));
    expect(res.uri).toBe(res.url);
    const [att] = (await attachments()).attachments;
    expect(att.name).toBe("My Report [final] (v2).pdf");
    expect(att.path_id).toBe(res.url.slice("/user_uploads/".length));
    const dl = await h.download(owner, res.url);
    expect(dl.status).toBe(200);
    // Every character outside RFC 5987's attr-char escaped, brackets and parentheses included.
    expect(dl.headers["content-disposition"]).toBe("inline; filename*=UTF-8''My%20Report%20%5Bfinal%5D%20%28v2%29.pdf");
    const added = (await h.events("messaging.attachment.uploaded"))[0].payload.client.event;
    expect(added.attachment.name).toBe("My Report [final] (v2).pdf");
  });

  it("drops the directory part, decodes percent-escapes, and keeps the extension of a name cut to 255 characters", async () => {
    expect((await upload("../../etc/passwd")).filename).toBe("passwd");
    expect((await upload("C:\\Users\\me\\win.txt")).filename).toBe("win.txt");
    const escaped = await upload("Q3%20report%E2%9C%93.txt");
    expect(escaped.filename).toBe("Q3 report✓.txt");
    expect(escaped.url.endsWith("/Q3-report.txt")).toBe(true);
    // A `%` that starts no escape is part of the name.
    expect((await upload("100%.txt")).filename).toBe("100%.txt");
    const long = await upload(`${"é".repeat(300)}.txt`);
    expect([...long.filename]).toHaveLength(255);
    expect(long.filename.endsWith("éé.txt")).toBe(true);
    // The URL's segment fits a file system's name limit in bytes (it was 396 bytes, and a 500).
    const segment = decodeURIComponent(long.url.slice(long.url.lastIndexOf("/") + 1));
    expect(segment.endsWith("éé.txt")).toBe(true);
    expect(Buffer.byteLength(segment)).toBeLessThanOrEqual(200);
    expect((await h.download(owner, long.url)).status).toBe(200);
    expect((await attachments()).attachments.map((a) => a.name)).toEqual(["passwd", "win.txt", "Q3 report✓.txt", "100%.txt", long.filename]);
  });

  it("a part that names no file is not an upload", async () => {
    for (const disposition of ['name="file"; filename=""', 'name="file"', 'name="file"; filename=".."']) {
      const res = await uploadRaw(owner, [{ disposition, type: "application/octet-stream", body: "bytes" }]);
      expect(res, disposition).toEqual({ status: 400, body: { result: "error", code: "BAD_REQUEST", msg: "You must specify a file to upload" } });
    }
    // Next to a real file it is ignored.
    const withFile = await uploadRaw(owner, [
      { disposition: 'name="x"', type: "application/octet-stream", body: "not a file" },
      { disposition: 'name="file"; filename="real.txt"', type: "text/plain", body: "real" },
    ]);
    expect(withFile.status, JSON.stringify(withFile.body)).toBe(200);
    expect(withFile.body.filename).toBe("real.txt");
    expect((await attachments()).attachments.map((a) => [a.name, a.size])).toEqual([["real.txt", 4]]);
    expect(await h.events("messaging.attachment.uploaded")).toHaveLength(1);
  });
});

describe("the type of an upload", () => {
  it("a part without a Content-Type gets the type its name suggests, as Zulip guesses it", async () => {
    const png = await uploadRaw(owner, [{ disposition: 'name="file"; filename="pic.png"', body: "png bytes" }]);
    expect(png.status).toBe(200);
    const dl = await h.download(owner, png.body.url);
    expect(dl.headers["content-type"]).toBe("image/png");
    expect(String(dl.headers["content-disposition"])).toMatch(/^inline;/);

    const txt = await uploadRaw(owner, [{ disposition: 'name="file"; filename="notes.txt"', body: "words" }]);
    expect((await h.download(owner, txt.body.url)).headers["content-type"]).toBe("text/plain");
    const unknown = await uploadRaw(owner, [{ disposition: 'name="file"; filename="data.xyz"', body: "?" }]);
    expect((await h.download(owner, unknown.body.url)).headers["content-type"]).toBe("text/plain");
    // The parser cannot tell a missing type from a declared text/plain: a guess that is no media type leaves it.
    const json = await uploadRaw(owner, [{ disposition: 'name="file"; filename="data.json"', body: "{}" }]);
    expect((await h.download(owner, json.body.url)).headers["content-type"]).toBe("text/plain");
  });

  it("a declared type is kept", async () => {
    const { url } = await upload("photo.png", "jpeg bytes", "image/jpeg");
    expect((await h.download(owner, url)).headers["content-type"]).toBe("image/jpeg");
  });
});

describe("times in attachment objects", () => {
  it("are whole seconds times 1000: date_sent is the message's timestamp times 1000", async () => {
    h.clock.set(new Date(T0.getTime() + 1_234));
    const { url } = await upload("t.txt");
    h.clock.set(new Date(T0.getTime() + 5_678));
    const messageId = await h.sendDirect(owner, [friend.userId], `[t](${url})`);
    const [att] = (await attachments()).attachments;
    expect(att.create_time).toBe(T0.getTime() + 1_000);
    expect(att.messages).toEqual([{ id: messageId, date_sent: T0.getTime() + 5_000 }]);
    const [added] = await h.events("messaging.attachment.uploaded");
    const [updated] = await h.events("messaging.attachment.updated");
    expect(added.payload.client.event.attachment.create_time).toBe(T0.getTime() + 1_000);
    expect(updated.payload.client.event.attachment.messages).toEqual([{ id: messageId, date_sent: T0.getTime() + 5_000 }]);
  });
});

describe("temporary URLs", () => {
  it("name the file's URL segment escaped, serve it without credentials for a minute, then not", async () => {
    const { url } = await upload("résumé été.txt", "cv");
    const temp = await temporaryUrl(owner, url);
    expect(temp.status).toBe(200);
    expect(temp.body.url).toMatch(new RegExp(`^/user_uploads/temporary/[A-Za-z0-9_.-]+/${encodeURIComponent("résumé-été.txt")}$`));
    expect(temp.body.url.slice(temp.body.url.lastIndexOf("/") + 1)).toBe(url.slice(url.lastIndexOf("/") + 1));

    h.clock.set(new Date(T0.getTime() + 59_000));
    const fresh = await anonymous(temp.body.url);
    expect([fresh.status, fresh.body]).toEqual([200, "cv"]);
    expect(fresh.headers["content-disposition"]).toBe(`inline; filename*=UTF-8''${encodeURIComponent("résumé été.txt")}`);
    h.clock.set(new Date(T0.getTime() + 60_000));
    const stale = await anonymous(temp.body.url);
    expect(stale.status).toBe(404);
    expect(JSON.parse(stale.body)).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Invalid token" });
  });

  it("are only issued to those who may read the file", async () => {
    const { url } = await upload("private.txt");
    expect((await temporaryUrl(stranger, url)).status).toBe(404);
    await h.sendDirect(owner, [stranger.userId], `[p](${url})`);
    expect((await temporaryUrl(stranger, url)).status).toBe(200);
  });
});
