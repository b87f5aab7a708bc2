import { z } from "zod";
import { envBool, loadConfig } from "@chat/platform";

/** Attachment settings, read beside messaging's own config (same process environment). */
export const attachmentsConfigShape = {
  /** Local directory for uploads when no S3 bucket is configured (a volume in Kubernetes). */
  UPLOADS_DIR: z.string().min(1).default("./.uploads"),
  /** Largest accepted upload, in MiB (Zulip's `max_file_upload_size_mib`). */
  MAX_FILE_UPLOAD_SIZE_MIB: z.coerce.number().positive().max(100 * 1024).default(100),
  /** Set to store uploads in S3-compatible object storage instead of UPLOADS_DIR. */
  S3_BUCKET: z.string().min(1).optional(),
  /** For S3-compatible services (MinIO, Ceph, ...); unset means AWS. */
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default("us-east-1"),
  /** Unset: the SDK's default credential chain (environment, web identity, instance role). */
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  /** Most S3-compatible servers want path-style URLs (`endpoint/bucket/key`). */
  S3_FORCE_PATH_STYLE: envBool(true),
  /** Prefix of every object key, so one bucket can serve several deployments. */
  S3_KEY_PREFIX: z.string().default(""),
};

export type AttachmentsConfig = z.infer<z.ZodObject<typeof attachmentsConfigShape>>;

export function loadAttachmentsConfig(env: Record<string, string | undefined> = process.env): AttachmentsConfig {
  return loadConfig(attachmentsConfigShape, env);
}
