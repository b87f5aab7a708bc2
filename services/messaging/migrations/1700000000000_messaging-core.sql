-- Up Migration

-- Replica of accounts' users, fed by accounts.user.* domain events (read-through on a miss).
CREATE TABLE users (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  email text NOT NULL,
  delivery_email text NOT NULL,
  full_name text NOT NULL,
  role integer NOT NULL,
  is_active boolean NOT NULL,
  is_bot boolean NOT NULL,
  bot_type integer,
  bot_owner_id bigint,
  date_joined text NOT NULL,
  timezone text NOT NULL DEFAULT '',
  synced_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX users_realm_email ON users (realm_id, lower(email));
CREATE INDEX users_realm_name ON users (realm_id, lower(full_name));

-- Realms whose whole user list was copied once from accounts; events keep them current after.
CREATE TABLE replica_realms (
  realm_id bigint PRIMARY KEY,
  synced_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE streams (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  rendered_description text NOT NULL DEFAULT '',
  invite_only boolean NOT NULL DEFAULT false,
  is_web_public boolean NOT NULL DEFAULT false,
  history_public_to_subscribers boolean NOT NULL DEFAULT true,
  stream_post_policy integer NOT NULL DEFAULT 1,
  message_retention_days integer,
  date_created timestamptz NOT NULL DEFAULT now(),
  creator_id bigint,
  can_remove_subscribers_group bigint NOT NULL,
  first_message_id bigint
);
CREATE UNIQUE INDEX streams_realm_name ON streams (realm_id, lower(name));

-- Zulip's Recipient: a channel, or the set of people in a direct conversation.
CREATE TABLE recipients (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  stream_id bigint REFERENCES streams (id) ON DELETE CASCADE,
  -- sorted participant ids, e.g. '4,9,12'; a DM to oneself is just the user's id
  user_ids_key text,
  CHECK ((stream_id IS NULL) <> (user_ids_key IS NULL))
);
CREATE UNIQUE INDEX recipients_stream ON recipients (stream_id) WHERE stream_id IS NOT NULL;
CREATE UNIQUE INDEX recipients_direct ON recipients (realm_id, user_ids_key) WHERE user_ids_key IS NOT NULL;

CREATE TABLE subscriptions (
  realm_id bigint NOT NULL,
  user_id bigint NOT NULL,
  stream_id bigint NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
  active boolean NOT NULL DEFAULT true,
  color text NOT NULL,
  is_muted boolean NOT NULL DEFAULT false,
  pin_to_top boolean NOT NULL DEFAULT false,
  desktop_notifications boolean,
  audible_notifications boolean,
  push_notifications boolean,
  email_notifications boolean,
  wildcard_mentions_notify boolean,
  PRIMARY KEY (user_id, stream_id)
);
CREATE INDEX subscriptions_stream ON subscriptions (stream_id) WHERE active;

CREATE TABLE messages (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  sender_id bigint NOT NULL,
  recipient_id bigint NOT NULL REFERENCES recipients (id),
  stream_id bigint,
  topic text NOT NULL DEFAULT '',
  content text NOT NULL,
  rendered_content text NOT NULL,
  sending_client text NOT NULL,
  date_sent timestamptz NOT NULL,
  last_edit_time timestamptz,
  has_link boolean NOT NULL DEFAULT false,
  has_image boolean NOT NULL DEFAULT false,
  has_attachment boolean NOT NULL DEFAULT false,
  search_tsv tsvector NOT NULL
);
CREATE INDEX messages_recipient ON messages (recipient_id, id);
CREATE INDEX messages_stream_topic ON messages (stream_id, lower(topic), id) WHERE stream_id IS NOT NULL;
CREATE INDEX messages_realm_sender ON messages (realm_id, sender_id, id);
CREATE INDEX messages_search ON messages USING gin (search_tsv);

-- Zulip's UserMessage: who received a message, with that user's flag bits.
CREATE TABLE usermessages (
  realm_id bigint NOT NULL,
  user_id bigint NOT NULL,
  message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  flags integer NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, message_id)
);
CREATE INDEX usermessages_message ON usermessages (message_id);
-- unread and starred lookups (bits: read = 1, starred = 2)
CREATE INDEX usermessages_unread ON usermessages (user_id, message_id) WHERE (flags & 1) = 0;
CREATE INDEX usermessages_starred ON usermessages (user_id, message_id) WHERE (flags & 2) <> 0;

-- A repeated internal send with the same key returns the first message.
CREATE TABLE send_idempotency (
  realm_id bigint NOT NULL,
  sender_id bigint NOT NULL,
  idempotency_key text NOT NULL,
  message_id bigint NOT NULL,
  automatic_new_visibility_policy integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (sender_id, idempotency_key)
);

CREATE TABLE drafts (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  user_id bigint NOT NULL,
  type text NOT NULL,
  to_ids bigint[] NOT NULL DEFAULT '{}',
  topic text NOT NULL DEFAULT '',
  content text NOT NULL,
  last_edit_time timestamptz NOT NULL
);
CREATE INDEX drafts_user ON drafts (user_id, last_edit_time);

CREATE TABLE user_topics (
  realm_id bigint NOT NULL,
  user_id bigint NOT NULL,
  stream_id bigint NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
  topic_name text NOT NULL,
  visibility_policy integer NOT NULL,
  last_updated timestamptz NOT NULL
);
CREATE UNIQUE INDEX user_topics_key ON user_topics (user_id, stream_id, lower(topic_name));

-- Down Migration
DROP TABLE user_topics;
DROP TABLE drafts;
DROP TABLE send_idempotency;
DROP TABLE usermessages;
DROP TABLE messages;
DROP TABLE subscriptions;
DROP TABLE recipients;
DROP TABLE streams;
DROP TABLE replica_realms;
DROP TABLE users;
