-- Up Migration
-- Every channel send reads the topic's visibility policies (who follows or muted it) by channel
-- and topic; the only index led with the user, so that read walked the whole index, every
-- user's policies in every organization, once per message. Building it blocks writes to
-- user_topics while it runs; on a large table create it beforehand with CREATE INDEX
-- CONCURRENTLY (docs/operating.md), and this step finds it there.
CREATE INDEX IF NOT EXISTS user_topics_topic ON user_topics (stream_id, lower(topic_name));

-- Down Migration
DROP INDEX user_topics_topic;
