import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorage, FileTooLargeError, LocalDirectoryStorage, loadAttachmentsConfig, type FileStorage } from "../src/storage";
import { S3Storage } from "../src/storage/s3";

/** A stream that yields `total` bytes in chunks, like a slow client upload. */
function chunks(total: number, chunk = 64 * 1024): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return this.push(null);
      const n = Math.min(chunk, total - sent);
      sent += n;
      this.push(Buffer.alloc(n, 97));
    },
  });
}

let tmp: string;
let s3: any;
let s3Url: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "storage-"));
  // An S3-compatible server in process (files on disk), standing in for MinIO or AWS.
  s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: path.join(tmp, "s3"), configureBuckets: [{ name: "uploads" }] });
  const { port } = await s3.run();
  s3Url = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await s3?.close();
  await rm(tmp, { recursive: true, force: true });
});

const s3Storage = () =>
  new S3Storage({ bucket: "uploads", endpoint: s3Url, region: "us-east-1", accessKeyId: "S3RVER", secretAccessKey: "S3RVER", forcePathStyle: true, keyPrefix: "test/" });

const kinds: Array<[string, () => FileStorage]> = [
  ["local directory", () => new LocalDirectoryStorage(path.join(tmp, "local"))],
  ["S3", s3Storage],
];

describe.each(kinds)("%s storage", (_name, make) => {
  it("stores, reads back and deletes a file", async () => {
    const storage = make();
    await storage.check();
    const key = "3/ab/randomrandom/file.txt";
    expect(await storage.put(key, Readable.from([Buffer.from("hello "), Buffer.from("world")]), { contentType: "text/plain", maxBytes: 100 })).toEqual({ size: 11 });
    const file = await storage.get(key);
    expect(file?.size).toBe(11);
    expect(await text(file!.stream)).toBe("hello world");
    await storage.delete(key);
    expect(await storage.get(key)).toBeNull();
    await storage.delete(key); // deleting twice is fine
  });

  it("reads back a byte range, reporting the whole file's size", async () => {
    const storage = make();
    const key = "3/cd/randomrandom/range.txt";
    await storage.put(key, Readable.from([Buffer.from("0123456789")]), { contentType: "text/plain", maxBytes: 100 });
    const part = await storage.get(key, { start: 2, end: 5 });
    expect(part?.size).toBe(10);
    expect(await text(part!.stream)).toBe("2345");
    const tail = await storage.get(key, { start: 9, end: 9 });
    expect(await text(tail!.stream)).toBe("9");
    await storage.delete(key);
  });

  it("streams a multi-part sized file", async () => {
    const storage = make();
    const key = "3/cd/bigbigbigbig/big.bin";
    const size = 12 * 1024 * 1024;
    expect(await storage.put(key, chunks(size), { contentType: "application/octet-stream", maxBytes: size })).toEqual({ size });
    const file = await storage.get(key);
    expect(file?.size).toBe(size);
    let read = 0;
    for await (const c of file!.stream) read += (c as Buffer).length;
    expect(read).toBe(size);
    await storage.delete(key);
  });

  it("refuses a body over the limit and keeps nothing", async () => {
    const storage = make();
    const key = "3/ef/toolargetoolarge/x.bin";
    await expect(storage.put(key, chunks(6 * 1024 * 1024), { contentType: "application/octet-stream", maxBytes: 5 * 1024 * 1024 })).rejects.toBeInstanceOf(FileTooLargeError);
    expect(await storage.get(key)).toBeNull();
  });
});

describe("configuration", () => {
  it("uses the local directory by default and S3 when a bucket is set", async () => {
    const local = await createStorage(loadAttachmentsConfig({ UPLOADS_DIR: path.join(tmp, "cfg") }));
    expect(local.kind).toBe("local");
    const remote = await createStorage(loadAttachmentsConfig({ S3_BUCKET: "uploads", S3_ENDPOINT: s3Url, S3_ACCESS_KEY_ID: "S3RVER", S3_SECRET_ACCESS_KEY: "S3RVER" }));
    expect(remote.kind).toBe("s3");
    await remote.check();
  });

  it("names a wrong variable", () => {
    expect(() => loadAttachmentsConfig({ MAX_FILE_UPLOAD_SIZE_MIB: "lots" })).toThrow(/MAX_FILE_UPLOAD_SIZE_MIB/);
  });
});

describe("uploads on S3", () => {
  it("round-trips an upload through the routes and deletes the object", async () => {
    const { startAttachmentsHarness, owner } = await import("./attachments-helpers");
    const h = await startAttachmentsHarness({ storage: () => s3Storage() });
    try {
      const up = await h.upload(owner, [{ name: "cloud.txt", body: "in the bucket" }]);
      expect(up.status).toBe(200);
      const dl = await h.download(owner, up.body.url);
      expect(dl.status).toBe(200);
      expect(dl.body.toString()).toBe("in the bucket");
      const { attachments } = (await h.call("GET", "/attachments", { as: owner })).body;
      expect((await h.call("DELETE", `/attachments/${attachments[0].id}`, { as: owner })).status).toBe(200);
      expect(await h.mod.storage.get(up.body.url.slice("/user_uploads/".length))).toBeNull();
    } finally {
      await h.close();
    }
  });
});
