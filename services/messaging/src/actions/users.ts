import type { Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { markRealmReplicated, upsertUsers, type ReplicaUser } from "../store/users";

/** Writes accounts' user records into the replica (consumer and read-through both land here). */
export async function doReplicateUsers(db: Queryable, users: ReplicaUser[]): Promise<void> {
  const unique = [...new Map(users.map((u) => [u.user_id, u])).values()];
  await upsertUsers(db, unique);
}

/** Copies a realm's whole user list once; domain events keep it current afterwards. */
export async function doReplicateRealmUsers(deps: AppDeps, realmId: number): Promise<void> {
  const users = await deps.accounts.getAllUsers(realmId);
  await doReplicateUsers(deps.pool, users);
  await markRealmReplicated(deps.pool, realmId);
}
