import { resourceNotFound, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { canSeeDeliveryEmail, EMAIL_VISIBILITY } from "../lib/user-settings";
import { getAvatarImage } from "../store/profile";
import { getUserSettingsRow, settingOfRealmUsers } from "../store/settings";
import type { UserRow } from "../store/users";
import { profileDataOf } from "./custom-profile-fields";

/** An uploaded avatar by its URL parts (`<token>.png` or `<token>-medium.png`); unknown ones are 404s. */
export async function getAvatarFile(deps: AccountsDeps, realmIdStr: string, filename: string) {
  const m = /^([A-Za-z0-9]+)(?:-medium)?\.png$/.exec(filename);
  const realmId = Number(realmIdStr);
  const image = m && /^[0-9]+$/.test(realmIdStr) ? await getAvatarImage(deps.pool, realmId, m[1]) : null;
  if (!image) throw resourceNotFound("Not Found");
  return image;
}

/** A user's email_address_visibility (everyone when never set). */
export async function emailVisibilityOf(db: Queryable, realmId: number, userId: number): Promise<number> {
  const value = (await getUserSettingsRow(db, realmId, userId)).email_address_visibility;
  return typeof value === "number" ? value : EMAIL_VISIBILITY.everyone;
}

/**
 * How one viewer sees other users' objects: `delivery_email` only where each user's
 * email_address_visibility lets the viewer see it (null otherwise), and, when asked,
 * `profile_data` for humans. Built once per request (two queries for the whole realm).
 */
export async function userViewFor(
  db: Queryable,
  realmId: number,
  viewer: { id: number; role: number },
  opts: { profileData: boolean },
): Promise<<O extends { delivery_email: string | null; profile_data?: Record<string, unknown> }>(u: Pick<UserRow, "id" | "isBot" | "deliveryEmail">, obj: O) => O> {
  const [visibility, profiles] = await Promise.all([
    settingOfRealmUsers(db, realmId, "email_address_visibility"),
    opts.profileData ? profileDataOf(db, realmId, null) : Promise.resolve(null),
  ]);
  return (u, obj) => {
    const policy = (visibility.get(u.id) as number | undefined) ?? EMAIL_VISIBILITY.everyone;
    const out = { ...obj, delivery_email: canSeeDeliveryEmail(viewer, u.id, policy) ? u.deliveryEmail : null };
    if (profiles && !u.isBot) out.profile_data = profiles.get(u.id) ?? {};
    return out;
  };
}

/** A user's own `profile_data` (GET /users/me). */
export async function ownProfileData(db: Queryable, realmId: number, userId: number) {
  return (await profileDataOf(db, realmId, [userId])).get(userId) ?? {};
}
