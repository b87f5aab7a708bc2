-- Up Migration
-- Users each user has muted (Zulip's MutedUser): one row per pair, with when it was muted.
CREATE TABLE muted_users (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint NOT NULL REFERENCES users (id),
  muted_user_id bigint NOT NULL REFERENCES users (id),
  date_muted timestamptz NOT NULL,
  UNIQUE (user_id, muted_user_id)
);
-- Orders the muted_users domain events of one user for replicas (messaging).
CREATE SEQUENCE muted_users_version;

-- Down Migration
DROP SEQUENCE muted_users_version;
DROP TABLE muted_users;
