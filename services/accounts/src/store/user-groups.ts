import type { Queryable } from "@chat/platform";

export interface UserGroupRow {
  id: number;
  realmId: number;
  /** null for an anonymous group (the object form of a group setting). */
  name: string | null;
  description: string;
  isSystemGroup: boolean;
  canMentionGroupId: number | null;
  deactivated: boolean;
}

/** A named group with its direct members and direct subgroups (API shape source). */
export interface UserGroupWithMembers extends UserGroupRow {
  members: number[];
  directSubgroupIds: number[];
}

function toGroup(r: any): UserGroupRow {
  return {
    id: r.id,
    realmId: r.realm_id,
    name: r.name,
    description: r.description,
    isSystemGroup: r.is_system_group,
    canMentionGroupId: r.can_mention_group_id,
    deactivated: r.deactivated,
  };
}

export async function insertGroup(
  db: Queryable,
  g: { realmId: number; name: string | null; description: string; isSystemGroup: boolean; canMentionGroupId: number | null; creatorId: number | null; now: Date },
): Promise<UserGroupRow> {
  const { rows } = await db.query(
    `INSERT INTO user_groups (realm_id, name, description, is_system_group, can_mention_group_id, creator_id, date_created)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [g.realmId, g.name, g.description, g.isSystemGroup, g.canMentionGroupId, g.creatorId, g.now],
  );
  return toGroup(rows[0]);
}

export async function setCanMentionGroup(db: Queryable, realmId: number, groupId: number, settingGroupId: number): Promise<void> {
  await db.query("UPDATE user_groups SET can_mention_group_id = $3 WHERE realm_id = $1 AND id = $2", [realmId, groupId, settingGroupId]);
}

export async function getGroup(db: Queryable, realmId: number, groupId: number): Promise<UserGroupRow | null> {
  const { rows } = await db.query("SELECT * FROM user_groups WHERE realm_id = $1 AND id = $2", [realmId, groupId]);
  return rows[0] ? toGroup(rows[0]) : null;
}

/** The group, locked until the transaction ends (a change to it). */
export async function lockGroup(db: Queryable, realmId: number, groupId: number): Promise<UserGroupRow | null> {
  const { rows } = await db.query("SELECT * FROM user_groups WHERE realm_id = $1 AND id = $2 FOR UPDATE", [realmId, groupId]);
  return rows[0] ? toGroup(rows[0]) : null;
}

export async function setGroupDeactivated(db: Queryable, realmId: number, groupId: number, deactivated: boolean): Promise<void> {
  await db.query("UPDATE user_groups SET deactivated = $3 WHERE realm_id = $1 AND id = $2", [realmId, groupId, deactivated]);
}

/** Active named groups that have this one as a direct subgroup. */
export async function activeNamedSupergroupIds(db: Queryable, realmId: number, groupId: number): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT g.id FROM user_group_subgroups s JOIN user_groups g ON g.id = s.supergroup_id
      WHERE s.realm_id = $1 AND s.subgroup_id = $2 AND g.name IS NOT NULL AND NOT g.deactivated ORDER BY g.id`,
    [realmId, groupId],
  );
  return rows.map((r) => Number(r.id));
}

/** Anonymous groups (setting values) that have this one as a direct subgroup. */
export async function anonymousSupergroupIds(db: Queryable, realmId: number, groupId: number): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT g.id FROM user_group_subgroups s JOIN user_groups g ON g.id = s.supergroup_id
      WHERE s.realm_id = $1 AND s.subgroup_id = $2 AND g.name IS NULL ORDER BY g.id`,
    [realmId, groupId],
  );
  return rows.map((r) => Number(r.id));
}

/** Active named groups, other than `exceptId`, whose can_mention_group is one of these setting groups. */
export async function activeGroupsMentionableBy(db: Queryable, realmId: number, settingGroupIds: number[], exceptId: number): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT id FROM user_groups WHERE realm_id = $1 AND name IS NOT NULL AND NOT deactivated AND id <> $3
        AND can_mention_group_id = ANY($2::bigint[]) ORDER BY id`,
    [realmId, settingGroupIds, exceptId],
  );
  return rows.map((r) => Number(r.id));
}

export async function getGroupsByIds(db: Queryable, realmId: number, ids: number[]): Promise<UserGroupRow[]> {
  const { rows } = await db.query("SELECT * FROM user_groups WHERE realm_id = $1 AND id = ANY($2::bigint[])", [realmId, ids]);
  return rows.map(toGroup);
}

/** Groups about to be used in a setting or as subgroups: share-locked so that deactivating one waits. */
export async function shareLockGroups(db: Queryable, realmId: number, ids: number[]): Promise<UserGroupRow[]> {
  const { rows } = await db.query("SELECT * FROM user_groups WHERE realm_id = $1 AND id = ANY($2::bigint[]) FOR SHARE", [realmId, ids]);
  return rows.map(toGroup);
}

export async function groupNameTaken(db: Queryable, realmId: number, name: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM user_groups WHERE realm_id = $1 AND name = $2", [realmId, name]);
  return (rowCount ?? 0) > 0;
}

/**
 * Named groups (system ones included) with direct members (deactivated users included) and
 * direct subgroups; deactivated groups unless `includeDeactivated` is false.
 */
export async function listNamedGroups(db: Queryable, realmId: number, onlyIds?: number[], includeDeactivated = true): Promise<UserGroupWithMembers[]> {
  const { rows } = await db.query(
    // Columns spelled out so the statement is prepared (see preparedName): register runs it.
    `SELECT g.id, g.realm_id, g.name, g.description, g.is_system_group, g.can_mention_group_id, g.deactivated,
       COALESCE((SELECT array_agg(m.user_id ORDER BY m.user_id) FROM user_group_members m
                  WHERE m.group_id = g.id), '{}') AS members,
       COALESCE((SELECT array_agg(s.subgroup_id ORDER BY s.subgroup_id) FROM user_group_subgroups s
                  WHERE s.supergroup_id = g.id), '{}') AS subgroups
     FROM user_groups g
     WHERE g.realm_id = $1 AND g.name IS NOT NULL AND ($2::bigint[] IS NULL OR g.id = ANY($2::bigint[])) AND ($3 OR NOT g.deactivated)
     ORDER BY g.id`,
    [realmId, onlyIds ?? null, includeDeactivated],
  );
  return rows.map((r) => ({ ...toGroup(r), members: r.members.map(Number), directSubgroupIds: r.subgroups.map(Number) }));
}

/** Id, name and kind of every active named group (no member lists: lookups by name or id). */
export async function listNamedGroupRefs(db: Queryable, realmId: number): Promise<Array<{ id: number; name: string; isSystemGroup: boolean }>> {
  const { rows } = await db.query(
    "SELECT id, name, is_system_group FROM user_groups WHERE realm_id = $1 AND name IS NOT NULL AND NOT deactivated ORDER BY id",
    [realmId],
  );
  return rows.map((r) => ({ id: Number(r.id), name: r.name, isSystemGroup: r.is_system_group }));
}

/** Direct members (deactivated ones included) and subgroups of any groups (anonymous setting groups included). */
export async function directContents(db: Queryable, realmId: number, groupIds: number[]): Promise<Map<number, { members: number[]; subgroups: number[] }>> {
  const out = new Map<number, { members: number[]; subgroups: number[] }>();
  for (const id of groupIds) out.set(id, { members: [], subgroups: [] });
  const m = await db.query(
    `SELECT m.group_id, m.user_id FROM user_group_members m
      WHERE m.realm_id = $1 AND m.group_id = ANY($2::bigint[]) ORDER BY m.user_id`,
    [realmId, groupIds],
  );
  for (const r of m.rows) out.get(r.group_id)?.members.push(r.user_id);
  const s = await db.query(
    "SELECT supergroup_id, subgroup_id FROM user_group_subgroups WHERE realm_id = $1 AND supergroup_id = ANY($2::bigint[]) ORDER BY subgroup_id",
    [realmId, groupIds],
  );
  for (const r of s.rows) out.get(r.supergroup_id)?.subgroups.push(r.subgroup_id);
  return out;
}

export async function systemGroupIds(db: Queryable, realmId: number): Promise<Record<string, number>> {
  const { rows } = await db.query("SELECT id, name FROM user_groups WHERE realm_id = $1 AND is_system_group", [realmId]);
  return Object.fromEntries(rows.map((r) => [r.name, r.id]));
}

export async function addMembers(db: Queryable, realmId: number, groupId: number, userIds: number[]): Promise<number[]> {
  if (!userIds.length) return [];
  const { rows } = await db.query(
    `INSERT INTO user_group_members (realm_id, group_id, user_id)
     SELECT $1, $2, unnest($3::bigint[]) ON CONFLICT DO NOTHING RETURNING user_id`,
    [realmId, groupId, userIds],
  );
  return rows.map((r) => r.user_id);
}

export async function removeMembers(db: Queryable, realmId: number, groupId: number, userIds: number[]): Promise<number[]> {
  const { rows } = await db.query(
    "DELETE FROM user_group_members WHERE realm_id = $1 AND group_id = $2 AND user_id = ANY($3::bigint[]) RETURNING user_id",
    [realmId, groupId, userIds],
  );
  return rows.map((r) => r.user_id);
}

export async function directMemberIds(db: Queryable, realmId: number, groupId: number, includeInactive = false): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT m.user_id FROM user_group_members m JOIN users u ON u.id = m.user_id
      WHERE m.realm_id = $1 AND m.group_id = $2 AND ($3 OR u.is_active) ORDER BY m.user_id`,
    [realmId, groupId, includeInactive],
  );
  return rows.map((r) => r.user_id);
}

export async function isDirectMember(db: Queryable, realmId: number, groupId: number, userId: number): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM user_group_members WHERE realm_id = $1 AND group_id = $2 AND user_id = $3", [realmId, groupId, userId]);
  return (rowCount ?? 0) > 0;
}

/** Direct members of a group, deactivated ones included, with what full membership depends on (only `userIds`, when given). */
export async function directMembersWithJoinDates(
  db: Queryable,
  realmId: number,
  groupId: number,
  userIds: number[] | null,
): Promise<Array<{ id: number; role: number; dateJoined: Date }>> {
  const { rows } = await db.query(
    `SELECT u.id, u.role, u.date_joined FROM user_group_members m JOIN users u ON u.id = m.user_id
      WHERE m.realm_id = $1 AND m.group_id = $2 AND ($3::bigint[] IS NULL OR m.user_id = ANY($3::bigint[])) ORDER BY u.id`,
    [realmId, groupId, userIds],
  );
  return rows.map((r) => ({ id: Number(r.id), role: r.role, dateJoined: r.date_joined }));
}

export async function addSubgroups(db: Queryable, realmId: number, groupId: number, subgroupIds: number[]): Promise<void> {
  if (!subgroupIds.length) return;
  await db.query(
    `INSERT INTO user_group_subgroups (realm_id, supergroup_id, subgroup_id)
     SELECT $1, $2, unnest($3::bigint[]) ON CONFLICT DO NOTHING`,
    [realmId, groupId, subgroupIds],
  );
}

export async function removeSubgroups(db: Queryable, realmId: number, groupId: number, subgroupIds: number[]): Promise<void> {
  await db.query(
    "DELETE FROM user_group_subgroups WHERE realm_id = $1 AND supergroup_id = $2 AND subgroup_id = ANY($3::bigint[])",
    [realmId, groupId, subgroupIds],
  );
}

export async function directSubgroupIds(db: Queryable, realmId: number, groupId: number): Promise<number[]> {
  const { rows } = await db.query(
    "SELECT subgroup_id FROM user_group_subgroups WHERE realm_id = $1 AND supergroup_id = $2 ORDER BY subgroup_id",
    [realmId, groupId],
  );
  return rows.map((r) => r.subgroup_id);
}

/** The group and every group below it, at any depth, in one recursive query. */
export async function recursiveSubgroupIds(db: Queryable, realmId: number, groupId: number): Promise<number[]> {
  const { rows } = await db.query(
    `WITH RECURSIVE below(id) AS (
       SELECT $2::bigint
       UNION
       SELECT s.subgroup_id FROM user_group_subgroups s JOIN below b ON s.supergroup_id = b.id WHERE s.realm_id = $1
     ) SELECT id FROM below ORDER BY id`,
    [realmId, groupId],
  );
  return rows.map((r) => r.id);
}

/** Members of the group or of any subgroup at any depth: active ones, or all with `includeInactive`. */
export async function recursiveMemberIds(db: Queryable, realmId: number, groupId: number, includeInactive = false): Promise<number[]> {
  const { rows } = await db.query(
    `WITH RECURSIVE below(id) AS (
       SELECT $2::bigint
       UNION
       SELECT s.subgroup_id FROM user_group_subgroups s JOIN below b ON s.supergroup_id = b.id WHERE s.realm_id = $1
     )
     SELECT DISTINCT m.user_id FROM user_group_members m JOIN below b ON m.group_id = b.id
       JOIN users u ON u.id = m.user_id AND ($3 OR u.is_active)
      WHERE m.realm_id = $1 ORDER BY m.user_id`,
    [realmId, groupId, includeInactive],
  );
  return rows.map((r) => r.user_id);
}

/** Whether the user is a member of the group or a subgroup at any depth (an active one, unless `includeInactive`). */
export async function isRecursiveMember(db: Queryable, realmId: number, groupId: number, userId: number, includeInactive = false): Promise<boolean> {
  const { rows } = await db.query(
    `WITH RECURSIVE below(id) AS (
       SELECT $2::bigint
       UNION
       SELECT s.subgroup_id FROM user_group_subgroups s JOIN below b ON s.supergroup_id = b.id WHERE s.realm_id = $1
     )
     SELECT EXISTS (SELECT 1 FROM user_group_members m JOIN below b ON m.group_id = b.id
                     JOIN users u ON u.id = m.user_id AND ($4 OR u.is_active)
                    WHERE m.realm_id = $1 AND m.user_id = $3) AS ok`,
    [realmId, groupId, userId, includeInactive],
  );
  return rows[0].ok;
}

/** Moves a user between the system role groups when their role changes. */
export async function removeFromSystemGroups(db: Queryable, realmId: number, userId: number): Promise<void> {
  await db.query(
    `DELETE FROM user_group_members m USING user_groups g
      WHERE m.group_id = g.id AND g.is_system_group AND m.realm_id = $1 AND m.user_id = $2`,
    [realmId, userId],
  );
}
