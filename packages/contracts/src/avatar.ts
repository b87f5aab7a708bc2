import { createHash } from "node:crypto";

/** What a user's avatar URL depends on (Zulip's avatar_source, avatar_version, delivery email). */
export interface AvatarFields {
  realmId: number;
  /** The real address: the Gravatar is that of the delivery email, never of a dummy API email. */
  deliveryEmail: string;
  avatarSource?: string;
  avatarVersion: number;
  avatarToken?: string | null;
}

/**
 * `clientGravatar`: the client computes Gravatar URLs itself from the API email, which it can
 * only do right for a user whose email everyone may see (`emailPublic`, whose API email is the
 * real one), so that is asked along with it.
 */
export type ClientGravatarOption = { clientGravatar: false } | { clientGravatar: boolean; emailPublic: boolean };
export type AvatarUrlOptions = ClientGravatarOption & { medium?: boolean };

export function gravatarUrl(email: string, version: number, medium = false): string {
  const hash = createHash("md5").update(email.trim().toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? "&s=500" : ""}&version=${version}`;
}

export const isUploadedAvatar = (u: AvatarFields) => u.avatarSource === "U" && !!u.avatarToken;

/**
 * The avatar URL Zulip gives (its get_avatar_field): the uploaded image (served by accounts'
 * GET /user_avatars/...) or the delivery email's Gravatar, with the avatar version against
 * stale caches. Null only for a Gravatar the client computes: client_gravatar, and the user's
 * email visible to everyone (Zulip's format_user_row and MessageDict turn client_gravatar off
 * for the others).
 */
export function avatarUrl(u: AvatarFields, opts: AvatarUrlOptions): string | null {
  if (isUploadedAvatar(u)) return `/user_avatars/${u.realmId}/${u.avatarToken}${opts.medium ? "-medium" : ""}.png?version=${u.avatarVersion}`;
  if (opts.clientGravatar && "emailPublic" in opts && opts.emailPublic) return null;
  return gravatarUrl(u.deliveryEmail, u.avatarVersion, opts.medium ?? false);
}
