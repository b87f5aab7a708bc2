-- Up Migration
-- A user's mentions by id (personal, channel-wide and topic-wide), as Zulip keeps them: the
-- `is:mentioned` narrow reads the newest of them, and without this it walked the user's rows
-- from the newest back until enough mentioned the user. Only those rows enter it. Building it
-- blocks writes to usermessages while it runs; on a large table create it beforehand with
-- CREATE INDEX CONCURRENTLY (docs/operating.md), and this step finds it there.
CREATE INDEX IF NOT EXISTS usermessages_mentioned ON usermessages (user_id, message_id) WHERE (flags & 56) <> 0;

-- Down Migration
DROP INDEX usermessages_mentioned;
