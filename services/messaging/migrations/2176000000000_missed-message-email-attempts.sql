-- Up Migration
-- Failed tries of a row's batch (accounts unreachable, a message the mail cannot be made of):
-- the job gives a row up after a bounded number of them instead of retrying it every minute
-- forever (actions/missed-message-emails.ts).
ALTER TABLE missed_message_emails ADD COLUMN attempts integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE missed_message_emails DROP COLUMN attempts;
