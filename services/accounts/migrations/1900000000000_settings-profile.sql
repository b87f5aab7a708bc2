-- Up Migration
-- Issue 10: personal settings, organization defaults for new users, alert words, avatars,
-- billing role and custom profile fields.

-- Settings that differ from the built-in defaults, per user (timezone and presence_enabled live
-- on users). A new user's row starts as a copy of the organization's defaults.
CREATE TABLE user_settings (
  user_id bigint PRIMARY KEY REFERENCES users (id),
  realm_id bigint NOT NULL REFERENCES realms (id),
  settings jsonb NOT NULL DEFAULT '{}'
);

-- The organization's defaults for new users, as differences from the built-in defaults.
CREATE TABLE realm_user_settings_defaults (
  realm_id bigint PRIMARY KEY REFERENCES realms (id),
  settings jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE alert_words (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint NOT NULL REFERENCES users (id),
  word text NOT NULL
);
-- Words are unique per user regardless of case; the first spelling is kept.
CREATE UNIQUE INDEX alert_words_user_word ON alert_words (user_id, lower(word));
-- Orders the alert_words domain events of one user for replicas (messaging).
CREATE SEQUENCE alert_words_version;

ALTER TABLE users
  ADD COLUMN avatar_source text NOT NULL DEFAULT 'G' CHECK (avatar_source IN ('G', 'U')),
  -- Random part of the uploaded avatar's URL; a new one per upload.
  ADD COLUMN avatar_token text,
  ADD COLUMN is_billing_admin boolean NOT NULL DEFAULT false;

CREATE TABLE avatars (
  user_id bigint PRIMARY KEY REFERENCES users (id),
  realm_id bigint NOT NULL REFERENCES realms (id),
  token text NOT NULL,
  content_type text NOT NULL,
  data bytea NOT NULL
);
CREATE UNIQUE INDEX avatars_realm_token ON avatars (realm_id, token);

CREATE TABLE custom_profile_fields (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  name text NOT NULL,
  hint text NOT NULL DEFAULT '',
  field_type integer NOT NULL,
  -- JSON text as clients receive it ('' when the type has none).
  field_data text NOT NULL DEFAULT '',
  "order" integer NOT NULL,
  display_in_profile_summary boolean NOT NULL DEFAULT false,
  required boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX custom_profile_fields_realm_name ON custom_profile_fields (realm_id, name);

CREATE TABLE custom_profile_field_values (
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint NOT NULL REFERENCES users (id),
  field_id bigint NOT NULL REFERENCES custom_profile_fields (id) ON DELETE CASCADE,
  value text NOT NULL,
  rendered_value text,
  PRIMARY KEY (user_id, field_id)
);
CREATE INDEX custom_profile_field_values_realm ON custom_profile_field_values (realm_id, field_id);

-- Down Migration
DROP TABLE custom_profile_field_values;
DROP TABLE custom_profile_fields;
DROP TABLE avatars;
ALTER TABLE users DROP COLUMN is_billing_admin, DROP COLUMN avatar_token, DROP COLUMN avatar_source;
DROP SEQUENCE alert_words_version;
DROP TABLE alert_words;
DROP TABLE realm_user_settings_defaults;
DROP TABLE user_settings;
