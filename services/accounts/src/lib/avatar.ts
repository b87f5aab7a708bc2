import { createHash } from "node:crypto";

/** What an avatar URL depends on (a users row). */
export interface AvatarFields {
  id: number;
  realmId: number;
  deliveryEmail: string;
  avatarVersion: number;
  avatarSource?: string;
  avatarToken?: string | null;
}

/** Largest accepted avatar upload (register's `max_avatar_file_size_mib`). */
export const MAX_AVATAR_BYTES = 5 * 1024 * 1024;

function gravatar(email: string, version: number, medium: boolean): string {
  const hash = createHash("md5").update(email.trim().toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? "&s=500" : ""}&version=${version}`;
}

export const isUploadedAvatar = (u: AvatarFields) => u.avatarSource === "U" && !!u.avatarToken;

/**
 * The avatar URL Zulip would give: the uploaded image (served by GET /user_avatars/...), or the
 * Gravatar one. With `clientGravatar` the client computes Gravatar URLs itself, so it is null.
 */
export function avatarUrl(u: AvatarFields, opts: { clientGravatar: boolean; medium?: boolean }): string | null {
  if (isUploadedAvatar(u)) return `/user_avatars/${u.realmId}/${u.avatarToken}${opts.medium ? "-medium" : ""}.png?version=${u.avatarVersion}`;
  return opts.clientGravatar ? null : gravatar(u.deliveryEmail, u.avatarVersion, opts.medium ?? false);
}

/** Image types we accept, recognised by their first bytes (the declared type is not trusted). */
export function sniffImageType(data: Buffer): string | null {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "image/jpeg";
  if (data.length >= 6 && (data.subarray(0, 6).toString("latin1") === "GIF87a" || data.subarray(0, 6).toString("latin1") === "GIF89a")) return "image/gif";
  if (data.length >= 12 && data.subarray(0, 4).toString("latin1") === "RIFF" && data.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return null;
}
