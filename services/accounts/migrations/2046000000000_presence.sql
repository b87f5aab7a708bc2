-- Up Migration
-- Presence as Zulip keeps it since 7.0 (UserPresence, PresenceSequence): one row per user, the
-- last time a client said the user was active and the last time one was connected at all (NULL
-- until it happened; clients are shown the date joined then). Every change takes the next
-- number of its organization's sequence, so a client can ask for "what changed since n".
CREATE TABLE presence_sequences (
  realm_id bigint PRIMARY KEY REFERENCES realms (id),
  last_update_id bigint NOT NULL
);

-- No foreign keys: inserting a row would take a share lock on the user's row, and a settings
-- change holds that row locked while it waits for the presence sequence (presence_enabled), so a
-- report racing it would deadlock. Users are never deleted, only deactivated.
CREATE TABLE user_presence (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  last_active_time timestamptz,
  last_connected_time timestamptz,
  last_update_id bigint NOT NULL
);
-- The incremental fetch (last_update_id > n) and the first one (connected in the last 14 days).
CREATE INDEX user_presence_realm_update ON user_presence (realm_id, last_update_id);
CREATE INDEX user_presence_realm_connected ON user_presence (realm_id, last_connected_time);

-- Down Migration
DROP TABLE user_presence;
DROP TABLE presence_sequences;
