-- Up Migration
-- Organizations. Policy columns use Zulip's integer enums so they can be returned as-is.
CREATE TABLE realms (
  id bigserial PRIMARY KEY,
  name text NOT NULL,
  string_id text NOT NULL,
  description text NOT NULL DEFAULT '',
  date_created timestamptz NOT NULL DEFAULT now(),
  deactivated boolean NOT NULL DEFAULT false,
  invite_required boolean NOT NULL DEFAULT true,
  invite_to_realm_policy integer NOT NULL DEFAULT 1,
  invite_to_stream_policy integer NOT NULL DEFAULT 1,
  wildcard_mention_policy integer NOT NULL DEFAULT 5,
  create_public_stream_policy integer NOT NULL DEFAULT 1,
  create_private_stream_policy integer NOT NULL DEFAULT 1,
  create_web_public_stream_policy integer NOT NULL DEFAULT 7,
  waiting_period_threshold integer NOT NULL DEFAULT 0,
  message_retention_days integer,
  mandatory_topics boolean NOT NULL DEFAULT false,
  enable_spectator_access boolean NOT NULL DEFAULT false,
  allow_message_editing boolean NOT NULL DEFAULT true,
  message_content_edit_limit_seconds integer DEFAULT 600,
  message_content_delete_limit_seconds integer,
  edit_topic_policy integer NOT NULL DEFAULT 5,
  move_messages_between_streams_policy integer NOT NULL DEFAULT 2,
  delete_own_message_policy integer NOT NULL DEFAULT 2,
  private_message_policy integer NOT NULL DEFAULT 1,
  max_invites_per_day integer,
  notification_bot_id bigint
);
CREATE UNIQUE INDEX realms_string_id ON realms (lower(string_id));

CREATE TABLE users (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  email text NOT NULL,
  delivery_email text NOT NULL,
  full_name text NOT NULL,
  role integer NOT NULL CHECK (role IN (100, 200, 300, 400, 600)),
  is_active boolean NOT NULL DEFAULT true,
  is_bot boolean NOT NULL DEFAULT false,
  bot_type integer,
  bot_owner_id bigint REFERENCES users (id),
  -- System bots (the notification bot) are listed as cross-realm bots, not as realm users.
  is_system_bot boolean NOT NULL DEFAULT false,
  date_joined timestamptz NOT NULL DEFAULT now(),
  timezone text NOT NULL DEFAULT '',
  password_hash text,
  avatar_version integer NOT NULL DEFAULT 1,
  presence_enabled boolean NOT NULL DEFAULT true
);
CREATE UNIQUE INDEX users_realm_email ON users (realm_id, lower(email));
CREATE INDEX users_email ON users (lower(email));
CREATE INDEX users_delivery_email ON users (lower(delivery_email));
CREATE INDEX users_bot_owner ON users (realm_id, bot_owner_id) WHERE bot_owner_id IS NOT NULL;

-- API keys are stored only as sha256 hashes. A user may hold several (POST /fetch_api_key
-- issues one per client login); a reset revokes them all.
CREATE TABLE api_keys (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  user_id bigint NOT NULL REFERENCES users (id),
  key_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_user ON api_keys (user_id);

-- User groups. Anonymous groups (name NULL) hold object-form group settings.
CREATE TABLE user_groups (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  name text,
  description text NOT NULL DEFAULT '',
  is_system_group boolean NOT NULL DEFAULT false,
  can_mention_group_id bigint REFERENCES user_groups (id),
  creator_id bigint,
  date_created timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_groups_realm_name ON user_groups (realm_id, name) WHERE name IS NOT NULL;

CREATE TABLE user_group_members (
  realm_id bigint NOT NULL,
  group_id bigint NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id),
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX user_group_members_user ON user_group_members (realm_id, user_id);

CREATE TABLE user_group_subgroups (
  realm_id bigint NOT NULL,
  supergroup_id bigint NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
  subgroup_id bigint NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
  PRIMARY KEY (supergroup_id, subgroup_id),
  CHECK (supergroup_id <> subgroup_id)
);
CREATE INDEX user_group_subgroups_sub ON user_group_subgroups (realm_id, subgroup_id);

-- Down Migration
DROP TABLE user_group_subgroups;
DROP TABLE user_group_members;
DROP TABLE user_groups;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE realms;
