-- Up Migration
-- Reusable invitation links (Zulip's MultiuseInvite): the key is kept as is, since GET /invites
-- shows the link to those who manage it. status 0 usable, 2 revoked; using one changes nothing.
CREATE TABLE multiuse_invites (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  referrer_id bigint NOT NULL REFERENCES users (id),
  invited_as integer NOT NULL,
  stream_ids bigint[] NOT NULL DEFAULT '{}',
  include_realm_default_subscriptions boolean NOT NULL DEFAULT false,
  confirmation_key text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  status smallint NOT NULL DEFAULT 0
);
CREATE INDEX multiuse_invites_realm ON multiuse_invites (realm_id);

-- Resending an email invitation: the list shows the last sending; each resend counts against
-- the daily limit as one more invitation, as in Zulip.
ALTER TABLE invites ADD COLUMN last_sent_at timestamptz;
CREATE TABLE invite_resends (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  invite_id bigint NOT NULL,
  resent_at timestamptz NOT NULL
);
CREATE INDEX invite_resends_realm_resent_at ON invite_resends (realm_id, resent_at);

-- Down Migration
DROP TABLE invite_resends;
ALTER TABLE invites DROP COLUMN last_sent_at;
DROP TABLE multiuse_invites;
