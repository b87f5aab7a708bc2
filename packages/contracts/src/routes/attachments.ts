import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/** An uploaded file as its owner sees it (GET /attachments, attachment events). Times in ms. */
export const Attachment = z.strictObject({
  id: z.number().int(),
  name: z.string(),
  path_id: z.string(),
  size: z.number().int(),
  create_time: z.number().int(),
  messages: z.array(z.strictObject({ id: z.number().int(), date_sent: z.number().int() })),
});
export type Attachment = z.infer<typeof Attachment>;

/** Multipart, exactly one file part (any field name); streamed to storage. */
export const UploadFile = route({
  method: "POST",
  path: "/user_uploads",
  service: "messaging",
  auth: "user",
  upload: true,
  params: {},
  response: success({ url: z.string(), uri: z.string(), filename: z.string() }),
});

/**
 * An upload, to the uploader and to users who can see a message that links it. At the root,
 * where `POST /user_uploads` points, the file's bytes; below `/api/v1` (the gateway says which),
 * Zulip's temporary URL: `{url}`, which serves the file without credentials for a minute.
 */
export const DownloadFile = route({
  method: "GET",
  path: "/user_uploads/{realm_id_str}/{dir}/{random}/{filename}",
  service: "messaging",
  auth: "user",
  params: {
    realm_id_str: p.str().path(),
    dir: p.str().path(),
    random: p.str().path(),
    filename: p.str().path(),
  },
  response: z.any(),
});

/** The file behind a temporary URL (see DownloadFile): no credentials, a signed token that expires. */
export const DownloadFileByToken = route({
  method: "GET",
  path: "/user_uploads/temporary/{token}/{filename}",
  service: "messaging",
  auth: "none",
  params: { token: p.str().path(), filename: p.str().path() },
  response: z.any(),
});

export const GetAttachments = route({
  method: "GET",
  path: "/attachments",
  service: "messaging",
  auth: "user",
  params: {},
  response: success({ attachments: z.array(Attachment), upload_space_used: z.number().int() }),
});

export const DeleteAttachment = route({
  method: "DELETE",
  path: "/attachments/{attachment_id}",
  service: "messaging",
  auth: "user",
  params: { attachment_id: p.int().path() },
  response: empty,
});

/** `/user_uploads/<path_id>` links in message content (relative or absolute URLs). */
const UPLOAD_LINK = /\/user_uploads\/(\d+\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{10,}\/[^\s()<>[\]"'?#]+)/g;

/**
 * The path ids of the uploads a message's content links (a link's file name is percent-decoded).
 * Messaging claims them at a send; the scheduler keeps the ones pending scheduled messages link.
 */
export function linkedPathIds(content: string): string[] {
  const ids = new Set<string>();
  for (const m of content.matchAll(UPLOAD_LINK)) {
    const segments = m[1].split("/");
    try {
      segments[3] = decodeURIComponent(segments[3]);
    } catch {
      continue;
    }
    ids.add(segments.join("/"));
  }
  return [...ids];
}

/**
 * Time-based clean-up, run by the scheduler: deletes uploads never linked from a message that
 * were uploaded before `uploaded_before` (Unix seconds), except those whose path ids are in
 * `keep` (linked from pending scheduled messages), and retries file removals left over from
 * earlier deletions. Deletes at most `limit` uploads per call.
 */
export const InternalCleanUpAttachments = route({
  method: "POST",
  path: "/internal/attachments/clean_up",
  service: "messaging",
  auth: "internal",
  params: {
    uploaded_before: p.int().required(),
    limit: p.int(z.number().int().min(1).max(10_000)).default(1000),
    keep: p.json(z.array(z.string())).default([]),
  },
  response: success({ deleted: z.number().int(), files_removed: z.number().int() }),
});
