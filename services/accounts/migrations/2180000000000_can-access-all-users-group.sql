-- Up Migration
-- Who accesses every user of the organization (Zulip's can_access_all_users_group, feature level
-- 225): the name of one of the two system groups the setting allows. With role:members, guests
-- access only the users they share a channel or a direct message conversation with.
ALTER TABLE realms
  ADD COLUMN can_access_all_users_group text NOT NULL DEFAULT 'role:everyone'
    CHECK (can_access_all_users_group IN ('role:everyone', 'role:members'));

-- Down Migration
ALTER TABLE realms DROP COLUMN can_access_all_users_group;
