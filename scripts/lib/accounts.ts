import { InternalCreateRealm, InternalCreateUser, InternalGetUsers, InternalResetApiKey, InternalSetBillingAdmin, InternalSetCanCreateUsers, type UserSummary } from "@chat/contracts";
import { ROLES } from "@chat/platform";
import { callRoute, CliError } from "./clients";
import type { CliConfig } from "./config";

/** Role names the CLI accepts, and Zulip's numeric roles they stand for. */
export const ROLE_NAMES: Record<string, number> = {
  owner: ROLES.owner,
  admin: ROLES.administrator,
  administrator: ROLES.administrator,
  moderator: ROLES.moderator,
  member: ROLES.member,
  guest: ROLES.guest,
};

export function parseRole(value: string): number {
  const role = ROLE_NAMES[value.toLowerCase()] ?? Number(value);
  if (!Object.values(ROLES).includes(role as never)) {
    throw new CliError(`unknown role "${value}" (one of: owner, admin, moderator, member, guest, or 100/200/300/400/600)`);
  }
  return role;
}

const accounts = (cfg: CliConfig) => ({ name: "accounts", url: cfg.ACCOUNTS_URL, token: cfg.INTERNAL_TOKEN });

export interface Credentials {
  user_id: number;
  email: string;
  api_key: string;
}

export async function createOrg(
  cfg: CliConfig,
  args: { name: string; stringId?: string; ownerEmail: string; ownerName: string; ownerPassword?: string },
) {
  return callRoute(accounts(cfg), InternalCreateRealm, {
    name: args.name,
    string_id: args.stringId,
    owner_email: args.ownerEmail,
    owner_full_name: args.ownerName,
    owner_password: args.ownerPassword,
  });
}

export async function createUser(
  cfg: CliConfig,
  args: { realmId: number; email: string; fullName: string; role: number; password?: string; botType?: number; botOwnerId?: number },
): Promise<Credentials> {
  return callRoute(accounts(cfg), InternalCreateUser, {
    realm_id: args.realmId,
    email: args.email,
    full_name: args.fullName,
    role: args.role,
    password: args.password,
    bot_type: args.botType,
    bot_owner_id: args.botOwnerId,
  });
}

export async function resetApiKey(cfg: CliConfig, realmId: number, email: string): Promise<Credentials> {
  return callRoute(accounts(cfg), InternalResetApiKey, { realm_id: realmId, email });
}

/** Grants or removes the billing role (Zulip sets it outside its API too). */
export async function setBillingAdmin(cfg: CliConfig, realmId: number, userId: number, value: boolean): Promise<void> {
  await callRoute(accounts(cfg), InternalSetBillingAdmin, { realm_id: realmId, user_id: userId, is_billing_admin: value });
}

/** Allows or disallows a user to create accounts through POST /users (Zulip's can_create_users). */
export async function setCanCreateUsers(cfg: CliConfig, realmId: number, userId: number, value: boolean): Promise<void> {
  await callRoute(accounts(cfg), InternalSetCanCreateUsers, { realm_id: realmId, user_id: userId, can_create_users: value });
}

/** Looks users up by email or numeric id; every one must exist in the organization. */
export async function findUsers(cfg: CliConfig, realmId: number, refs: string[]): Promise<UserSummary[]> {
  if (refs.length === 0) return [];
  const ids = refs.filter((r) => /^\d+$/.test(r)).map(Number);
  const emails = refs.filter((r) => !/^\d+$/.test(r));
  const found: UserSummary[] = [];
  if (ids.length) found.push(...(await callRoute(accounts(cfg), InternalGetUsers, { realm_id: realmId, user_ids: ids })).users);
  if (emails.length) found.push(...(await callRoute(accounts(cfg), InternalGetUsers, { realm_id: realmId, emails })).users);
  return refs.map((ref) => {
    const user = found.find((u) => (/^\d+$/.test(ref) ? u.user_id === Number(ref) : u.email.toLowerCase() === ref.toLowerCase()));
    if (!user) throw new CliError(`no user ${ref} in organization ${realmId}`);
    return user;
  });
}
