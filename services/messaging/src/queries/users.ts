import type { AppDeps } from "../deps";
import { doReplicateRealmUsers, doReplicateUsers } from "../actions/users";
import {
  isRealmReplicated,
  selectActiveRealmUsers,
  selectActiveUsersByNames,
  selectUsersByEmails,
  selectUsersByIds,
  type UserRow,
} from "../store/users";

/**
 * Users of a realm by id, from the replica; ids it does not know yet are read through from
 * accounts (a user created a moment ago may not have reached the replica), and so are rows
 * without their avatar data (written before it was replicated, see the users_avatar migration).
 */
export async function getUsersByIds(deps: AppDeps, realmId: number, ids: number[]): Promise<Map<number, UserRow>> {
  const wanted = [...new Set(ids)];
  const found = new Map((await selectUsersByIds(deps.pool, realmId, wanted)).map((u) => [u.id, u]));
  const missing = wanted.filter((id) => !found.has(id));
  const incomplete = wanted.filter((id) => found.get(id)?.emailPublic === null);
  if (missing.length > 0 || incomplete.length > 0) {
    const fetched = await readThrough(deps, realmId, missing, incomplete);
    if (fetched.length > 0) {
      await doReplicateUsers(deps.pool, fetched);
      for (const u of await selectUsersByIds(deps.pool, realmId, fetched.map((f) => f.user_id))) found.set(u.id, u);
    }
  }
  return found;
}

/** Missing users must be read; incomplete rows still serve (their avatar as if the email were hidden) if accounts cannot answer. */
async function readThrough(deps: AppDeps, realmId: number, missing: number[], incomplete: number[]) {
  try {
    return await deps.accounts.getUsers(realmId, { userIds: [...missing, ...incomplete] });
  } catch (err) {
    if (missing.length > 0) throw err;
    deps.log.warn({ err: (err as Error).message, realmId }, "users replica: avatar data not read again, accounts did not answer");
    return [];
  }
}

export async function getUser(deps: AppDeps, realmId: number, id: number): Promise<UserRow | undefined> {
  return (await getUsersByIds(deps, realmId, [id])).get(id);
}

/**
 * Users by API email (case-insensitive), keyed by the lower-cased email. An address with a NUL
 * (`to` of a direct message is JSON inside a plain string, so `"\u0000"` gets this far) is
 * nobody's and is not asked for: PostgreSQL refuses NUL in text, which would be a 500.
 */
export async function getUsersByEmails(deps: AppDeps, realmId: number, emails: string[]): Promise<Map<string, UserRow>> {
  const wanted = [...new Set(emails.filter((e) => !e.includes("\u0000")).map((e) => e.toLowerCase()))];
  const found = new Map((await selectUsersByEmails(deps.pool, realmId, wanted)).map((u) => [u.email.toLowerCase(), u]));
  const missing = wanted.filter((e) => !found.has(e));
  if (missing.length > 0) {
    const fetched = await deps.accounts.getUsers(realmId, { emails: missing });
    if (fetched.length > 0) {
      await doReplicateUsers(deps.pool, fetched);
      for (const u of await selectUsersByEmails(deps.pool, realmId, missing)) found.set(u.email.toLowerCase(), u);
    }
  }
  return found;
}

async function ensureRealmReplica(deps: AppDeps, realmId: number): Promise<void> {
  if (!(await isRealmReplicated(deps.pool, realmId))) await doReplicateRealmUsers(deps, realmId);
}

/**
 * Every active user of the realm (audiences of realm-wide events), as accounts lists them: not
 * the notification bot, a system bot that the replica knows only once it has sent something.
 */
export async function getActiveRealmUsers(deps: AppDeps, realmId: number): Promise<UserRow[]> {
  await ensureRealmReplica(deps, realmId);
  const bot = (await deps.accounts.getRealm(realmId)).notification_bot_id;
  return (await selectActiveRealmUsers(deps.pool, realmId)).filter((u) => u.id !== bot);
}

/** Names that are wildcard mentions, never a user's (`@**all**`...): never looked up in accounts. */
const WILDCARD_NAMES = new Set(["all", "everyone", "stream", "channel", "topic"]);

/**
 * Active users whose full name matches (mention lookup). Names the replica does not know are asked
 * of accounts: a user or bot made a moment ago is not in the replica yet (it follows accounts'
 * events), and a mention of them must not render as plain text. Should accounts not answer, the
 * replica's answer stands.
 */
export async function getActiveUsersByNames(deps: AppDeps, realmId: number, lowerNames: string[]): Promise<UserRow[]> {
  if (lowerNames.length === 0) return [];
  await ensureRealmReplica(deps, realmId);
  const found = await selectActiveUsersByNames(deps.pool, realmId, lowerNames);
  const known = new Set(found.map((u) => u.fullName.toLowerCase()));
  const unknown = lowerNames.filter((n) => !known.has(n) && !WILDCARD_NAMES.has(n));
  if (unknown.length === 0) return found;
  let fetched;
  try {
    // An accounts of an earlier release ignores full_names and lists everyone: filtered here either way.
    fetched = (await deps.accounts.getUsers(realmId, { fullNames: unknown })).filter((u) => unknown.includes(u.full_name.toLowerCase()));
  } catch (err) {
    deps.log.warn({ err: (err as Error).message, realmId }, "mentions: names not looked up in accounts");
    return found;
  }
  if (fetched.length === 0) return found;
  await doReplicateUsers(deps.pool, fetched);
  return selectActiveUsersByNames(deps.pool, realmId, lowerNames);
}
