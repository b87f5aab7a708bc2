-- Up Migration

-- Zulip's RealmEmoji: an organization's custom emoji. Deactivation keeps the row (old reactions
-- and statuses still show it); only one active emoji may carry a name.
CREATE TABLE realm_emoji (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  name text NOT NULL,
  author_id bigint,
  -- `<id>.<ext>`, the image's name in storage and in source_url
  file_name text NOT NULL,
  content_type text NOT NULL,
  is_animated boolean NOT NULL DEFAULT false,
  deactivated boolean NOT NULL DEFAULT false,
  date_created timestamptz NOT NULL
);
CREATE UNIQUE INDEX realm_emoji_active_name ON realm_emoji (realm_id, name) WHERE NOT deactivated;
CREATE INDEX realm_emoji_realm ON realm_emoji (realm_id, id);

-- Zulip's Reaction: one user's emoji on one message; a user reacts with an emoji once.
CREATE TABLE reactions (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  user_id bigint NOT NULL,
  emoji_name text NOT NULL,
  emoji_code text NOT NULL,
  reaction_type text NOT NULL
);
CREATE UNIQUE INDEX reactions_unique ON reactions (user_id, message_id, reaction_type, emoji_code);
CREATE INDEX reactions_message ON reactions (message_id, id);

-- Down Migration
DROP TABLE reactions;
DROP TABLE realm_emoji;
