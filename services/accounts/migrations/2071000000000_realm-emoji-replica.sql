-- Up Migration
-- A replica of messaging's custom emoji (messaging.realm_emoji.updated, or read from messaging
-- on a miss), for checking status emoji. Emoji are never deleted nor reactivated and their ids
-- never reused, so rows are only added and `deactivated` only ever turns true.
CREATE TABLE realm_emoji (
  realm_id bigint NOT NULL REFERENCES realms (id),
  id bigint NOT NULL,
  name text NOT NULL,
  deactivated boolean NOT NULL DEFAULT false,
  PRIMARY KEY (realm_id, id)
);
CREATE INDEX realm_emoji_active_name ON realm_emoji (realm_id, name) WHERE NOT deactivated;

-- Down Migration
DROP TABLE realm_emoji;
