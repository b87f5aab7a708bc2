-- Up Migration
-- A message's usermessage rows go with it through this trigger instead of the foreign key. The
-- key was checked for every row a send writes (an index probe and a row lock per recipient:
-- about a tenth of PostgreSQL's work per channel message, bench/README.md round 7), and a send
-- writes its rows in the same statement as the message. The one other writer (a starred
-- historical row, actions/flags.ts) locks the message FOR KEY SHARE first, as the key did, so a
-- deletion waits for it and this trigger, reading after the wait, removes that row too.
CREATE FUNCTION usermessages_follow_messages() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM usermessages u USING gone g WHERE u.message_id = g.id;
  RETURN NULL;
END $$;
CREATE TRIGGER messages_delete_usermessages AFTER DELETE ON messages
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION usermessages_follow_messages();
ALTER TABLE usermessages DROP CONSTRAINT usermessages_message_id_fkey;

-- Down Migration
DELETE FROM usermessages u WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = u.message_id);
ALTER TABLE usermessages ADD CONSTRAINT usermessages_message_id_fkey FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE;
DROP TRIGGER messages_delete_usermessages ON messages;
DROP FUNCTION usermessages_follow_messages();
