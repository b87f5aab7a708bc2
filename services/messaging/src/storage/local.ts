import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { byteLimit } from "./limit";
import type { ByteRange, FileStorage, StoredFile } from "./types";

/**
 * Files in a local directory (in Kubernetes: a volume shared by the messaging replicas). A file is
 * written under a temporary name and renamed into place, so readers never see half a file.
 */
export class LocalDirectoryStorage implements FileStorage {
  readonly kind = "local";
  private readonly root: string;

  constructor(dir: string) {
    this.root = path.resolve(dir);
  }

  /** Keys come from the database, but a key must never leave the root whatever it holds. */
  private pathOf(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`storage key outside the root: ${key}`);
    return full;
  }

  async put(key: string, body: Readable, opts: { maxBytes: number }): Promise<{ size: number }> {
    const target = this.pathOf(key);
    const tmpDir = path.join(this.root, ".tmp");
    await fs.mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, randomUUID());
    const limit = byteLimit(opts.maxBytes);
    try {
      await pipeline(body, limit, createWriteStream(tmp, { flags: "wx" }));
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.rename(tmp, target);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    return { size: limit.bytes };
  }

  async get(key: string, range?: ByteRange): Promise<StoredFile | null> {
    const file = this.pathOf(key);
    try {
      const stat = await fs.stat(file);
      return { stream: createReadStream(file, range ? { start: range.start, end: range.end } : {}), size: stat.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await fs.rm(file, { force: true });
    // Drop the now empty per-upload directory (`<realm>/<xx>/<random>/`); the rest is shared.
    await fs.rmdir(path.dirname(file)).catch(() => {});
  }

  async check(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true });
    await fs.access(this.root, fs.constants.W_OK);
  }
}
