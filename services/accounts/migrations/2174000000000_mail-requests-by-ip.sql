-- Up Migration
-- The anonymous requests that mail someone (the password reset form, a reusable link's address
-- form), per client address, for Zulip's sends_email_by_ip limit. A row lives a day: the window
-- it counts in.
CREATE TABLE mail_requests_by_ip (
  id bigserial PRIMARY KEY,
  ip text NOT NULL,
  requested_at timestamptz NOT NULL
);
CREATE INDEX mail_requests_by_ip_ip ON mail_requests_by_ip (ip, requested_at);
CREATE INDEX mail_requests_by_ip_requested_at ON mail_requests_by_ip (requested_at);

-- Expired email changes are deleted as changes are asked for and confirmed (see deleteExpiredEmailChanges).
CREATE INDEX email_changes_expires_at ON email_changes (expires_at);

-- Down Migration
DROP INDEX email_changes_expires_at;
DROP TABLE mail_requests_by_ip;
