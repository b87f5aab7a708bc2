-- Up Migration
-- Password reset links ("Forgot your password?"): one row per link mailed to an account. Only the
-- key's hash is kept (the key travels only in the mail), as for invitations. A link works once
-- (used_at) and until expires_at; setting a password uses up the account's other links too.
CREATE TABLE password_reset_keys (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint NOT NULL REFERENCES users (id),
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX password_reset_keys_user ON password_reset_keys (realm_id, user_id);
CREATE INDEX password_reset_keys_expires_at ON password_reset_keys (expires_at);

-- The reset form's requests per address, for Zulip's password_reset_form_by_email limit. The
-- address is kept hashed (lower-cased first): most may belong to no account.
CREATE TABLE password_reset_requests (
  id bigserial PRIMARY KEY,
  email_hash text NOT NULL,
  requested_at timestamptz NOT NULL
);
CREATE INDEX password_reset_requests_email ON password_reset_requests (email_hash, requested_at);

-- Down Migration
DROP TABLE password_reset_requests;
DROP TABLE password_reset_keys;
