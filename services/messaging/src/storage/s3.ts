import type { Readable } from "node:stream";
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, NoSuchKey, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { byteLimit } from "./limit";
import type { ByteRange, FileStorage, StoredFile } from "./types";

export interface S3StorageOptions {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  keyPrefix: string;
}

/**
 * Files in S3-compatible object storage. Uploads stream through a multipart upload (parts of
 * 5 MiB in flight, never the whole file); an upload over the limit is aborted, leaving nothing.
 */
export class S3Storage implements FileStorage {
  readonly kind = "s3";
  private readonly client: S3Client;

  constructor(private readonly opts: S3StorageOptions) {
    this.client = new S3Client({
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle,
      credentials:
        opts.accessKeyId && opts.secretAccessKey ? { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } : undefined,
    });
  }

  private keyOf(key: string): string {
    return this.opts.keyPrefix + key;
  }

  async put(key: string, body: Readable, opts: { contentType: string; maxBytes: number }): Promise<{ size: number }> {
    const limit = byteLimit(opts.maxBytes);
    // Errors of the source (too large, client gone) must reach the upload as an abort.
    body.on("error", (err) => limit.destroy(err));
    body.pipe(limit);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.opts.bucket, Key: this.keyOf(key), Body: limit, ContentType: opts.contentType },
      queueSize: 2,
      leavePartsOnError: false,
    });
    const failed = new Promise<never>((_, reject) => limit.once("error", reject));
    failed.catch(() => {}); // observed through the race below
    try {
      await Promise.race([upload.done(), failed]);
    } catch (err) {
      body.unpipe(limit);
      body.resume(); // let the rest of the request drain instead of stalling it
      await upload.abort().catch(() => {});
      // A single-part upload may have completed before the error surfaced.
      await this.delete(key).catch(() => {});
      throw err;
    }
    return { size: limit.bytes };
  }

  async get(key: string, range?: ByteRange): Promise<StoredFile | null> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      // A ranged answer's Content-Range ends in the whole object's size.
      const total = range ? Number(/\/(\d+)$/.exec(res.ContentRange ?? "")?.[1] ?? NaN) : Number(res.ContentLength ?? 0);
      return { stream: res.Body as Readable, size: total };
    } catch (err) {
      if (err instanceof NoSuchKey || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key) }));
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.opts.bucket }));
  }
}
