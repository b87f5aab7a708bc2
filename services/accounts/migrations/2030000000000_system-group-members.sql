-- Up Migration
-- Role system groups as Zulip structures them. A user of role member (400) is a direct member of
-- role:members, and also of role:fullmembers once their account is at least the organization's
-- waiting period old; no one else is a direct member of either (owners, administrators and
-- moderators reach role:fullmembers as its subgroup role:moderators). We used to put a member in
-- role:fullmembers only (or role:members only, with a waiting period), so clients saw role:members
-- without the organization's members. Deactivated users and bots count as anyone else (Zulip
-- keeps their memberships); system bots belong to no group.
INSERT INTO user_group_members (realm_id, group_id, user_id)
SELECT u.realm_id, g.id, u.id
  FROM users u JOIN user_groups g ON g.realm_id = u.realm_id AND g.is_system_group AND g.name = 'role:members'
 WHERE u.role = 400 AND NOT u.is_system_bot
ON CONFLICT DO NOTHING;

DELETE FROM user_group_members m USING user_groups g, users u
 WHERE g.id = m.group_id AND g.is_system_group AND g.name = 'role:members'
   AND u.id = m.user_id AND u.role <> 400;

DELETE FROM user_group_members m USING user_groups g, users u, realms r
 WHERE g.id = m.group_id AND g.is_system_group AND g.name = 'role:fullmembers'
   AND u.id = m.user_id AND r.id = u.realm_id
   AND (u.role <> 400 OR u.date_joined > now() - make_interval(days => r.waiting_period_threshold));

INSERT INTO user_group_members (realm_id, group_id, user_id)
SELECT u.realm_id, g.id, u.id
  FROM users u
  JOIN realms r ON r.id = u.realm_id
  JOIN user_groups g ON g.realm_id = u.realm_id AND g.is_system_group AND g.name = 'role:fullmembers'
 WHERE u.role = 400 AND NOT u.is_system_bot
   AND u.date_joined <= now() - make_interval(days => r.waiting_period_threshold)
ON CONFLICT DO NOTHING;

-- Zulip's descriptions of the system groups (clients show them).
UPDATE user_groups SET description = CASE name
    WHEN 'role:owners' THEN 'Owners of this organization'
    WHEN 'role:administrators' THEN 'Administrators of this organization, including owners'
    WHEN 'role:moderators' THEN 'Moderators of this organization, including administrators'
    WHEN 'role:fullmembers' THEN 'Members of this organization, not including new accounts and guests'
    WHEN 'role:members' THEN 'Members of this organization, not including guests'
    WHEN 'role:everyone' THEN 'Everyone in this organization, including guests'
    WHEN 'role:internet' THEN 'Everyone on the Internet'
    WHEN 'role:nobody' THEN 'Nobody'
    ELSE description END
 WHERE is_system_group;

-- Down Migration
-- Back to one direct role group per member: role:fullmembers for those in it, role:members for
-- the others; and the former descriptions.
DELETE FROM user_group_members m USING user_groups g, user_groups f
 WHERE g.id = m.group_id AND g.is_system_group AND g.name = 'role:members'
   AND f.realm_id = g.realm_id AND f.is_system_group AND f.name = 'role:fullmembers'
   AND EXISTS (SELECT 1 FROM user_group_members x WHERE x.group_id = f.id AND x.user_id = m.user_id);

UPDATE user_groups SET description = CASE name
    WHEN 'role:owners' THEN 'Organization owners'
    WHEN 'role:administrators' THEN 'Organization administrators (owners included)'
    WHEN 'role:moderators' THEN 'Moderators (administrators included)'
    WHEN 'role:fullmembers' THEN 'Members past the waiting period (moderators included)'
    WHEN 'role:members' THEN 'All members, guests excluded'
    WHEN 'role:everyone' THEN 'All users, guests included'
    WHEN 'role:internet' THEN 'Anyone on the Internet'
    WHEN 'role:nobody' THEN 'Nobody'
    ELSE description END
 WHERE is_system_group;
