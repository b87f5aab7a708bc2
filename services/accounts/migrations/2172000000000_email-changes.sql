-- Up Migration
-- Requested email address changes (Zulip's EmailChangeStatus and its confirmation): the new
-- address waits here until its owner follows the link mailed to it. Only the key's hash is kept
-- (the key travels only in the mail). A row stays after use or expiry: the rows of the last day
-- are also what the per-user rate limit of requests counts.
CREATE TABLE email_changes (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint NOT NULL REFERENCES users (id),
  old_email text NOT NULL,
  new_email text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  requested_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX email_changes_user_requested_at ON email_changes (user_id, requested_at);

-- Down Migration
DROP TABLE email_changes;
