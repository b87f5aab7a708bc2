import { randomBytes } from "node:crypto";
import { SYSTEM_GROUP_NAMES } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import { exceeds } from "../lib/validate";
import { insertRealm, realmStringIdTaken, setNotificationBot } from "../store/realms";
import { addSubgroups, insertGroup, setCanMentionGroup } from "../store/user-groups";
import { createUserInTx } from "./users";

/** Zulip's descriptions of its system groups (zerver/models/groups.py), which clients show. */
const SYSTEM_GROUP_DESCRIPTIONS: Record<string, string> = {
  "role:owners": "Owners of this organization",
  "role:administrators": "Administrators of this organization, including owners",
  "role:moderators": "Moderators of this organization, including administrators",
  "role:fullmembers": "Members of this organization, not including new accounts and guests",
  "role:members": "Members of this organization, not including guests",
  "role:everyone": "Everyone in this organization, including guests",
  "role:internet": "Everyone on the Internet",
  "role:nobody": "Nobody",
};

/**
 * Each role group contains the next more privileged one as its only subgroup, as Zulip nests them
 * (role:nobody stands alone), so membership is inherited upward.
 */
const SYSTEM_NESTING: Array<[string, string]> = [
  ["role:administrators", "role:owners"],
  ["role:moderators", "role:administrators"],
  ["role:fullmembers", "role:moderators"],
  ["role:members", "role:fullmembers"],
  ["role:everyone", "role:members"],
  ["role:internet", "role:everyone"],
];

const STRING_ID = /^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$|^[a-z0-9]$/;

function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 30)
    .replace(/-+$/, "");
  return slug || "org";
}

async function createSystemGroups(tx: Queryable, realmId: number, now: Date): Promise<Record<string, number>> {
  const ids: Record<string, number> = {};
  for (const name of SYSTEM_GROUP_NAMES) {
    const g = await insertGroup(tx, {
      realmId,
      name,
      description: SYSTEM_GROUP_DESCRIPTIONS[name],
      isSystemGroup: true,
      canMentionGroupId: null,
      creatorId: null,
      now,
    });
    ids[name] = g.id;
  }
  // Nobody may mention a system group.
  for (const id of Object.values(ids)) await setCanMentionGroup(tx, realmId, id, ids["role:nobody"]);
  for (const [parent, child] of SYSTEM_NESTING) await addSubgroups(tx, realmId, ids[parent], [ids[child]]);
  return ids;
}

export interface CreateRealmInput {
  name: string;
  stringId?: string;
  ownerEmail: string;
  ownerFullName: string;
  ownerPassword?: string;
}

/** A new organization: system groups, notification bot, first owner, in one transaction. */
export async function doCreateRealm(deps: AccountsDeps, input: CreateRealmInput) {
  const name = input.name.trim();
  if (!name) throw badRequest("Organization name cannot be blank");
  if (exceeds(name, 40)) throw badRequest("Organization name is too long (limit: 40 characters)");
  return withTx(deps.pool, async (tx) => {
    let stringId = input.stringId?.trim().toLowerCase();
    if (stringId !== undefined && stringId !== "") {
      if (!STRING_ID.test(stringId)) throw badRequest("Subdomain can only have lowercase letters, numbers, and '-'s.");
      if (await realmStringIdTaken(tx, stringId)) throw badRequest("Subdomain is already in use. Please choose a different one.");
    } else {
      stringId = slugify(name);
      while (await realmStringIdTaken(tx, stringId)) stringId = `${slugify(name)}-${randomBytes(3).toString("hex")}`;
    }
    const now = deps.clock.now();
    const realm = await insertRealm(tx, name, stringId, now);
    await emitEvent(tx, { type: "accounts.realm.created", realmId: realm.id, payload: { realm_id: realm.id, name, string_id: stringId } });
    const systemGroups = await createSystemGroups(tx, realm.id, now);
    const bot = await createUserInTx(tx, deps, {
      realmId: realm.id,
      email: `notification-bot@${stringId}.invalid`,
      fullName: "Notification Bot",
      role: ROLE.member,
      botType: 1,
      isSystemBot: true,
    });
    await setNotificationBot(tx, realm.id, bot.user.id);
    const owner = await createUserInTx(tx, deps, {
      realmId: realm.id,
      email: input.ownerEmail,
      fullName: input.ownerFullName,
      role: ROLE.owner,
      password: input.ownerPassword ?? null,
    });
    return { realm, systemGroups, owner: owner.user, apiKey: owner.apiKey, notificationBotId: bot.user.id };
  });
}
