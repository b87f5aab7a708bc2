-- Up Migration
-- Zulip 10's group deactivation (feature level 290): the group keeps its members and subgroups.
ALTER TABLE user_groups ADD COLUMN deactivated boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE user_groups DROP COLUMN deactivated;
