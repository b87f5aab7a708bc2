-- Up Migration
-- A user's rows whose message contains one of their alert words, as Zulip keeps them: the
-- `is:alerted` narrow reads the newest of them, and without this it walked the user's rows from
-- the newest back until enough had the flag. Only those rows enter it. Building it blocks writes
-- to usermessages while it runs; on a large table create it beforehand with CREATE INDEX
-- CONCURRENTLY (docs/operating.md), and this step finds it there.
CREATE INDEX IF NOT EXISTS usermessages_alerted ON usermessages (user_id, message_id) WHERE (flags & 64) <> 0;

-- Down Migration
DROP INDEX usermessages_alerted;
