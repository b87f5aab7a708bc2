-- Up Migration
CREATE TABLE user_status (
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint PRIMARY KEY REFERENCES users (id),
  status_text text NOT NULL DEFAULT '',
  emoji_name text NOT NULL DEFAULT '',
  emoji_code text NOT NULL DEFAULT '',
  reaction_type text NOT NULL DEFAULT 'unicode_emoji',
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_status_realm ON user_status (realm_id);

-- Linkifiers are applied in `position` order; clients must keep that order.
CREATE TABLE linkifiers (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  pattern text NOT NULL,
  url_template text NOT NULL,
  position integer NOT NULL
);
CREATE UNIQUE INDEX linkifiers_realm_pattern ON linkifiers (realm_id, pattern);
CREATE INDEX linkifiers_realm_order ON linkifiers (realm_id, position, id);

-- kind: 1 APNs, 2 GCM/FCM (Zulip's PushDeviceToken kinds).
CREATE TABLE push_device_tokens (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint NOT NULL REFERENCES users (id),
  kind smallint NOT NULL,
  token text NOT NULL,
  ios_app_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX push_device_tokens_user_kind_token ON push_device_tokens (user_id, kind, token);

-- Invitations: the link key is stored only as a hash; status 0 pending, 1 accepted, 2 revoked.
CREATE TABLE invites (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  email text NOT NULL,
  referrer_id bigint NOT NULL REFERENCES users (id),
  invited_as integer NOT NULL,
  stream_ids bigint[] NOT NULL DEFAULT '{}',
  include_realm_default_subscriptions boolean NOT NULL DEFAULT false,
  notify_referrer_on_join boolean NOT NULL DEFAULT true,
  key_hash text NOT NULL UNIQUE,
  invited_at timestamptz NOT NULL,
  expires_at timestamptz,
  status smallint NOT NULL DEFAULT 0,
  accepted_user_id bigint
);
CREATE INDEX invites_realm_invited_at ON invites (realm_id, invited_at);
CREATE INDEX invites_realm_email ON invites (realm_id, lower(email));

-- Down Migration
DROP TABLE invites;
DROP TABLE push_device_tokens;
DROP TABLE linkifiers;
DROP TABLE user_status;
