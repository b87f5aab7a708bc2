-- Up Migration
-- Every channel send reads the topic's visibility policies (who follows or muted it) by channel
-- and topic; the only index led with the user, so that read walked the whole index, every
-- user's policies in every organization, once per message.
CREATE INDEX user_topics_topic ON user_topics (stream_id, lower(topic_name));

-- Down Migration
DROP INDEX user_topics_topic;
