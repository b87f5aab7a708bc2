-- Up Migration
-- The organization's own Jitsi Meet server (Zulip's realm jitsi_server_url, feature level 212):
-- NULL uses the server's. Who may create reusable invitation links (Zulip's
-- create_multiuse_invite_group, feature level 209): the name of one of the system groups the
-- setting allows, administrators as before.
ALTER TABLE realms
  ADD COLUMN jitsi_server_url text,
  ADD COLUMN create_multiuse_invite_group text NOT NULL DEFAULT 'role:administrators'
    CHECK (create_multiuse_invite_group IN ('role:administrators', 'role:moderators', 'role:fullmembers', 'role:members', 'role:nobody'));

-- Down Migration
ALTER TABLE realms
  DROP COLUMN jitsi_server_url,
  DROP COLUMN create_multiuse_invite_group;
