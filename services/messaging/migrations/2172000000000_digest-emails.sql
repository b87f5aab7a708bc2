-- Up Migration
-- Zulip's weekly digest emails: when each user's digest was last made. A process claims a user's
-- digest by moving last_digest_at in the transaction that queues the mail (INSERT ... ON CONFLICT
-- guarded by the time of the last one), so replicas and restarts make at most one a week. The row
-- is written too when there was nothing to tell (mailed false): the user is not looked at again
-- until next week's digest day.
CREATE TABLE digest_emails (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  last_digest_at timestamptz NOT NULL,
  mailed boolean NOT NULL
);

-- Down Migration
DROP TABLE digest_emails;
