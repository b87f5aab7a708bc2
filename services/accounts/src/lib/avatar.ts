import { createHash } from "node:crypto";
import { EMAIL_VISIBILITY } from "./user-settings";

// The URL rules are shared with messaging (message senders' avatars): packages/contracts.
export { avatarUrl, isUploadedAvatar, type AvatarFields } from "@chat/contracts";

/**
 * An organization's icon: with no uploads of icons, Gravatar's identicon for the organization
 * (icon source "G"), as Zulip makes it from the organization's id.
 */
export const realmIconUrl = (realmId: number) => `https://secure.gravatar.com/avatar/${createHash("md5").update(String(realmId)).digest("hex")}?d=identicon`;

/** Largest accepted avatar upload (register's `max_avatar_file_size_mib`). */
export const MAX_AVATAR_BYTES = 5 * 1024 * 1024;

/**
 * Whether a user's email is visible to everyone, so that their API email is the real one and
 * clients may compute their Gravatar (client_gravatar).
 */
export const isEmailPublic = (emailVisibility: number) => emailVisibility === EMAIL_VISIBILITY.everyone;

/** Image types we accept, recognised by their first bytes (the declared type is not trusted). */
export function sniffImageType(data: Buffer): string | null {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "image/jpeg";
  if (data.length >= 6 && (data.subarray(0, 6).toString("latin1") === "GIF87a" || data.subarray(0, 6).toString("latin1") === "GIF89a")) return "image/gif";
  if (data.length >= 12 && data.subarray(0, 4).toString("latin1") === "RIFF" && data.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return null;
}
