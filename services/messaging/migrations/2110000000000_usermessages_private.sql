-- Up Migration
-- A user's direct messages by id, as Zulip keeps them: register's recent_private_conversations
-- and the `is:dm` narrow read the newest of them, and without this they walked the user's rows
-- from the newest back until enough were direct messages (all of them, for a user who has few).
-- Only direct messages' rows enter it. Building it blocks writes to usermessages while it runs;
-- on a large table create it beforehand with CREATE INDEX CONCURRENTLY (docs/operating.md), and
-- this step finds it there.
CREATE INDEX IF NOT EXISTS usermessages_private ON usermessages (user_id, message_id) WHERE (flags & 256) <> 0;

-- Down Migration
DROP INDEX usermessages_private;
