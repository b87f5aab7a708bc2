-- Up Migration
-- Replica of each user's alert words, fed by accounts' `accounts.alert_words.changed` events.
-- `version` only grows, so a late or repeated event never brings back an older list.
CREATE TABLE alert_words (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  words text[] NOT NULL,
  version bigint NOT NULL
);
CREATE INDEX alert_words_realm_user ON alert_words (realm_id, user_id) WHERE cardinality(words) > 0;

-- Down Migration
DROP TABLE alert_words;
