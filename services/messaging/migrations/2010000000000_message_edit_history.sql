-- Up Migration
-- Zulip's Message.edit_history: the message's edits, newest first, each as Zulip stores it
-- ({user_id, timestamp} plus prev_content / prev_rendered_content /
-- prev_rendered_content_version, prev_topic / topic, prev_stream / stream for what changed).
-- NULL until the first edit. GET /messages shows it; GET /messages/{id}/history fills it out.
ALTER TABLE messages ADD COLUMN edit_history jsonb;

-- Down Migration
ALTER TABLE messages DROP COLUMN edit_history;
