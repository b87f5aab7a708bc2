-- Up Migration
-- Saved snippets (Zulip's SavedSnippet, Zulip 10): text a user keeps to insert into messages.
CREATE TABLE saved_snippets (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  user_id bigint NOT NULL,
  title text NOT NULL,
  content text NOT NULL,
  date_created timestamptz NOT NULL
);
CREATE INDEX saved_snippets_user ON saved_snippets (user_id, id);

-- Down Migration
DROP TABLE saved_snippets;
