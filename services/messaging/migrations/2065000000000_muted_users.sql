-- Up Migration
-- Replica of the users each user has muted, fed by accounts' `accounts.muted_users.changed`
-- events. A send looks up who muted its sender (their copy starts read), hence the GIN index.
-- `version` only grows, so a late or repeated event never brings back an older list.
CREATE TABLE muted_users (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  muted_user_ids bigint[] NOT NULL,
  version bigint NOT NULL
);
CREATE INDEX muted_users_muted ON muted_users USING gin (muted_user_ids);

-- Down Migration
DROP TABLE muted_users;
