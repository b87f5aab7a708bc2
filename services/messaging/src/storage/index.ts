import type { AttachmentsConfig } from "./config";
import { LocalDirectoryStorage } from "./local";
import type { FileStorage } from "./types";

export * from "./config";
export * from "./types";
export { LocalDirectoryStorage } from "./local";

/** S3 when a bucket is configured, else the local directory. */
export async function createStorage(config: AttachmentsConfig): Promise<FileStorage> {
  if (config.S3_BUCKET) {
    // Loaded only when used: deployments on a volume never pay for the SDK.
    const { S3Storage } = await import("./s3");
    return new S3Storage({
      bucket: config.S3_BUCKET,
      endpoint: config.S3_ENDPOINT,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
      keyPrefix: config.S3_KEY_PREFIX,
    });
  }
  return new LocalDirectoryStorage(config.UPLOADS_DIR);
}
