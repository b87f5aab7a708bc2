-- Up Migration
-- Mails waiting to be sent (platform's MailSender): written in the transaction that makes a mail
-- due, deleted once the SMTP server took it (their links are secrets) or after the last attempt.
-- A new mail is due at once (-infinity: whatever the clock says); next_attempt_at is then the
-- lease of the process sending it, and after a failure the time of the retry.
CREATE TABLE mail_outbox (
  id bigserial PRIMARY KEY,
  to_address text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text,
  from_name text,
  reply_to text,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT '-infinity',
  last_error text
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at);

-- Down Migration
DROP TABLE mail_outbox;
