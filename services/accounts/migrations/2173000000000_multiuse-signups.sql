-- Up Migration
-- Sign-ups through a reusable invitation link (Zulip's PreregistrationUser of a multiuse
-- invite): a visitor gives an address on `/join/{key}/` and that address is mailed a
-- confirmation link. Only the mailed key's hash is kept. A row lives a day: it confirms for a day
-- and counts against its address's daily number of mails for a day, then it is deleted.
CREATE TABLE multiuse_signups (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  multiuse_invite_id bigint NOT NULL REFERENCES multiuse_invites (id),
  email text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX multiuse_signups_email_created_at ON multiuse_signups (lower(email), created_at);
CREATE INDEX multiuse_signups_created_at ON multiuse_signups (created_at);

-- Down Migration
DROP TABLE multiuse_signups;
