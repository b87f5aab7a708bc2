import { DeactivateUser, DeleteOwnAvatar, GetAvatarImage, ReactivateUser, UpdateUser, UploadOwnAvatar } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { doDeactivateUserByAdmin, doDeleteOwnAvatar, doReactivateUser, doUpdateUserByAdmin, doUploadOwnAvatar } from "../actions/profile";
import type { AccountsDeps } from "../deps";
import { MAX_AVATAR_BYTES } from "../lib/avatar";
import { getAvatarFile } from "../queries/profile";

/**
 * Reads the file parts of a multipart request, keeping at most MAX_AVATAR_BYTES (+1, to detect
 * larger files) of each; a second file part is counted, not read.
 */
async function readFiles(req: FastifyRequest): Promise<Array<{ data: Buffer; truncated: boolean }>> {
  if (!req.isMultipart()) return [];
  const files: Array<{ data: Buffer; truncated: boolean }> = [];
  try {
    for await (const part of req.parts()) {
      if (part.type !== "file") continue;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of part.file) {
        size += chunk.length;
        if (size <= MAX_AVATAR_BYTES + 1) chunks.push(chunk);
      }
      files.push({ data: Buffer.concat(chunks), truncated: size > MAX_AVATAR_BYTES || part.file.truncated });
    }
  } catch (err) {
    // The multipart limit allows one file: more than one is the client's mistake, said Zulip's way.
    if ((err as { code?: string }).code === "FST_FILES_LIMIT") return [...files, { data: Buffer.alloc(0), truncated: false }];
    throw err;
  }
  return files;
}

export function profileRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, UpdateUser, async ({ identity, params }) => {
    await doUpdateUserByAdmin(deps, identity, params.user_id, {
      fullName: params.full_name,
      role: params.role,
      profileData: params.profile_data,
    });
    return {};
  });

  registerRoute(app, DeactivateUser, async ({ identity, params }) => {
    await doDeactivateUserByAdmin(deps, identity, params.user_id, params.deactivation_notification_comment);
    return {};
  });

  registerRoute(app, ReactivateUser, async ({ identity, params }) => {
    await doReactivateUser(deps, identity, params.user_id);
    return {};
  });

  registerRoute(app, UploadOwnAvatar, async ({ identity, req }) => ({ avatar_url: await doUploadOwnAvatar(deps, identity, await readFiles(req)) }));
  registerRoute(app, DeleteOwnAvatar, async ({ identity }) => ({ avatar_url: await doDeleteOwnAvatar(deps, identity) }));

  registerRoute(app, GetAvatarImage, async ({ params, reply }) => {
    const image = await getAvatarFile(deps, params.realm_id_str, params.filename);
    // Written directly: the body is the image, not a JSON envelope.
    reply.hijack();
    reply.raw.writeHead(200, { "Content-Type": image.contentType, "Content-Length": image.data.length, "Cache-Control": "public, max-age=31536000" });
    reply.raw.end(image.data);
    return undefined as never;
  });
}
