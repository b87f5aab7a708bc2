import type { FastifyReply, FastifyRequest } from "fastify";
import { PassThrough, pipeline as pipelineCb } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DeleteAttachment, DownloadFile, DownloadFileByToken, GetAttachments, InternalCleanUpAttachments, UploadFile } from "@chat/contracts";
import { ApiError, badRequest, INTERNAL_HEADERS, registerRoute, type Identity, type Logger, type Pool } from "@chat/platform";
import {
  FileReaper,
  discardStagedUpload,
  doCleanUpAttachments,
  doCreateAttachment,
  doDeleteAttachment,
  storeUploadedFile,
  tooLarge,
  type AttachmentsDeps,
  type StagedUpload,
} from "../actions/attachments";
import type { AppDeps, RoutePlugin } from "../deps";
import { uploadedFileName, uploadUrl } from "../lib/upload-names";
import { accessAttachmentByToken, accessAttachmentForDownload, getAttachments } from "../queries/attachments";
import { readUploadToken, signUploadToken } from "../lib/upload-token";
import type { AttachmentRow } from "../store/attachments";
import { createStorage, FileTooLargeError, loadAttachmentsConfig, type ByteRange, type FileStorage } from "../storage";
import { requestedRange } from "../lib/byte-range";

export interface AttachmentsModule {
  storage: FileStorage;
  maxUploadBytes: number;
  reaper: FileReaper;
}

/**
 * Storage, limit and file reaper from the environment (UPLOADS_DIR or S3_*, MAX_FILE_UPLOAD_SIZE_MIB).
 * main builds it once and hands it to `attachmentRoutes` and `attachmentHooks`.
 */
export async function createAttachmentsModule(deps: { pool: Pool; log: Logger }, env: Record<string, string | undefined> = process.env): Promise<AttachmentsModule> {
  const config = loadAttachmentsConfig(env);
  const storage = await createStorage(config);
  return { storage, maxUploadBytes: Math.floor(config.MAX_FILE_UPLOAD_SIZE_MIB * 1024 * 1024), reaper: new FileReaper({ ...deps, storage }) };
}

/** Reads the one file of a multipart upload into storage; refuses zero, two, or too many bytes. */
async function receiveSingleFile(req: FastifyRequest, deps: AttachmentsDeps, who: Identity): Promise<StagedUpload> {
  if (!req.isMultipart()) throw badRequest("You must specify a file to upload");
  let staged: StagedUpload | null = null;
  let extraFiles = false;
  try {
    // Busboy stops a file at the limit and flags it truncated; the file count allows one extra
    // so a second file can be named in the error instead of breaking the stream.
    for await (const part of req.parts({ limits: { fileSize: deps.maxUploadBytes, files: 2 } })) {
      if (part.type !== "file") continue;
      // A part without a file name is a form field to Zulip, whatever its type says.
      const fileName = uploadedFileName(part.filename);
      if (fileName === null) {
        part.file.resume();
        continue;
      }
      if (staged) {
        extraFiles = true;
        part.file.resume();
        continue;
      }
      // A part cut short (the body ended mid-file) is destroyed before we get it when the whole
      // body arrived at once, and piping a destroyed stream never settles: refuse it now, and
      // bind the stream to a pipe at once so a later failure reaches storage.
      if (part.file.destroyed) throw badRequest("Malformed multipart body");
      const body = new PassThrough();
      pipelineCb(part.file, body, () => {});
      staged = await storeUploadedFile(deps, who, { stream: body, fileName, mimetype: part.mimetype });
      if (part.file.truncated) throw new FileTooLargeError(deps.maxUploadBytes);
    }
  } catch (err) {
    if (staged) await discardStagedUpload(deps, staged);
    const code = (err as { code?: string }).code;
    if (err instanceof FileTooLargeError || code === "FST_REQ_FILE_TOO_LARGE") throw tooLarge(deps.maxUploadBytes);
    if (code === "FST_FILES_LIMIT") throw badRequest("You may only upload one file at a time");
    throw err;
  }
  if (extraFiles && staged) {
    await discardStagedUpload(deps, staged);
    throw badRequest("You may only upload one file at a time");
  }
  if (!staged) throw badRequest("You must specify a file to upload");
  return staged;
}

/** Types a browser may show inline; anything else downloads, so an upload can never run as a page. */
const INLINE_TYPES = /^(image\/(png|jpeg|gif|webp|avif|bmp)|audio\/[\w.+-]+|video\/[\w.+-]+|application\/pdf|text\/plain)$/i;

/** A name as an RFC 5987 header value: percent-escaped, `'()*` included (encodeURIComponent keeps them). */
const encodeHeaderValue = (name: string) => encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

async function sendFile(
  reply: FastifyReply,
  req: FastifyRequest,
  file: { stream: NodeJS.ReadableStream; size: number },
  name: string,
  contentType: string,
  range: ByteRange | null,
) {
  const disposition = INLINE_TYPES.test(contentType) ? "inline" : "attachment";
  reply.hijack();
  reply.raw.writeHead(range ? 206 : 200, {
    "content-type": contentType,
    "content-length": String(range ? range.end - range.start + 1 : file.size),
    ...(range ? { "content-range": `bytes ${range.start}-${range.end}/${file.size}` } : {}),
    // Players seek in audio and video with ranges (Safari plays no video without them).
    "accept-ranges": "bytes",
    "content-disposition": `${disposition}; filename*=UTF-8''${encodeHeaderValue(name)}`,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "cache-control": "private, max-age=86400",
    [INTERNAL_HEADERS.requestId]: req.id,
  });
  await pipeline(file.stream, reply.raw).catch((err) => req.log.warn({ err: (err as Error).message }, "download interrupted"));
}

/** Upload, download, list and delete attachments; plus the clean-up the scheduler calls. */
export function attachmentRoutes(mod: AttachmentsModule): RoutePlugin {
  return (app, appDeps: AppDeps) => {
    const deps: AttachmentsDeps = { pool: appDeps.pool, clock: appDeps.clock, log: appDeps.log, storage: mod.storage, maxUploadBytes: mod.maxUploadBytes };

    registerRoute(app, UploadFile, async ({ req, identity }) => {
      const staged = await receiveSingleFile(req, deps, identity);
      await doCreateAttachment(deps, identity, staged);
      const url = uploadUrl(staged.pathId);
      return { url, uri: url, filename: staged.fileName };
    });

    /** The stored file of `row`, whole or the range asked for. */
    async function serve(row: AttachmentRow, req: FastifyRequest, reply: FastifyReply) {
      const range = requestedRange(req.headers.range, req.headers["if-range"] as string | undefined, row.size);
      if (range === "unsatisfiable") {
        throw new ApiError("BAD_REQUEST", "Requested range not satisfiable", { status: 416, headers: { "Content-Range": `bytes */${row.size}` } });
      }
      const file = await deps.storage.get(row.pathId, range ?? undefined);
      if (!file) {
        req.log.error({ pathId: row.pathId }, "attachment row without a stored file");
        throw new ApiError("BAD_REQUEST", "File not found", { status: 404 });
      }
      await sendFile(reply, req, file, row.fileName, row.contentType, range);
    }

    registerRoute(app, DownloadFile, async ({ params, identity, req, reply }) => {
      const pathId = [params.realm_id_str, params.dir, params.random, params.filename].join("/");
      const row = await accessAttachmentForDownload(deps.pool, identity, params.realm_id_str, pathId);
      // Below /api/v1 a client asks for a URL it can open without credentials (Zulip's mobile
      // apps hand it to a browser), not for the file.
      if (req.headers[INTERNAL_HEADERS.apiForm] === "1") {
        const token = signUploadToken(appDeps.config.INTERNAL_TOKEN, row.pathId, deps.clock.now());
        return { url: `/user_uploads/temporary/${token}/${encodeURIComponent(row.pathId.slice(row.pathId.lastIndexOf("/") + 1))}` };
      }
      await serve(row, req, reply);
      return {};
    });

    registerRoute(app, DownloadFileByToken, async ({ params, req, reply }) => {
      const pathId = readUploadToken(appDeps.config.INTERNAL_TOKEN, params.token, deps.clock.now());
      await serve(await accessAttachmentByToken(deps.pool, pathId, params.filename), req, reply);
      return {};
    });

    registerRoute(app, GetAttachments, async ({ identity }) => getAttachments(deps.pool, identity));

    registerRoute(app, DeleteAttachment, async ({ params, identity }) => {
      await doDeleteAttachment(deps, identity, params.attachment_id, mod.reaper);
      return {};
    });

    registerRoute(app, InternalCleanUpAttachments, async ({ params }) =>
      doCleanUpAttachments(deps, mod.reaper, new Date(params.uploaded_before * 1000), params.limit, params.keep),
    );
  };
}
