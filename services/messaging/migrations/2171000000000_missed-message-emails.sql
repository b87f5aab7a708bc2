-- Up Migration
-- Zulip's missed-message email notifications: one row per message that may be mailed to a
-- recipient who is away (a direct message, a mention, a message in a followed topic or in a
-- channel whose email notifications they turned on), written with the message. `triggers` lists
-- why, most important first (comma-separated). `due_at` is the message's time plus the user's
-- batching period; once a user's earliest row is due, the job takes all of that user's rows and
-- mails each conversation's still-unread messages, then deletes the rows.
CREATE TABLE missed_message_emails (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  user_id bigint NOT NULL,
  message_id bigint NOT NULL,
  triggers text NOT NULL,
  due_at timestamptz NOT NULL
);
CREATE INDEX missed_message_emails_due ON missed_message_emails (due_at);
CREATE INDEX missed_message_emails_user ON missed_message_emails (user_id, message_id);
-- Channel sends look up the few users who turned channel email notifications on by default.
CREATE INDEX user_settings_stream_email ON user_settings (realm_id, user_id)
  WHERE settings @> '{"enable_stream_email_notifications": true}';

-- Down Migration
DROP INDEX user_settings_stream_email;
DROP TABLE missed_message_emails;
