-- Up Migration
-- Messages no longer check their recipient with a foreign key: the check ran for every message
-- written (a row lock on the recipient, through a trigger: about a quarter of the send's
-- statement in PostgreSQL's own timing, bench/README.md round 16), while a recipient is never
-- removed and every writer takes the id from the recipients table in the same request (the
-- channel's row, or the conversation's, created first when new). What the key guaranteed stays
-- true by refusing to delete recipients at all.
ALTER TABLE messages DROP CONSTRAINT messages_recipient_id_fkey;
CREATE FUNCTION recipients_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'recipients are never deleted: messages refer to them by id';
END $$;
CREATE TRIGGER recipients_kept BEFORE DELETE ON recipients FOR EACH STATEMENT EXECUTE FUNCTION recipients_kept();

-- Down Migration
DROP TRIGGER recipients_kept ON recipients;
DROP FUNCTION recipients_kept();
ALTER TABLE messages ADD CONSTRAINT messages_recipient_id_fkey FOREIGN KEY (recipient_id) REFERENCES recipients (id);
