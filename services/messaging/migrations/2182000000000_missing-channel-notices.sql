-- Up Migration
-- When the notification bot last told the owner of an integration URL's key (a bot's owner, or
-- the person whose key it is) that the URL names a channel it cannot post to. A request claims
-- the notice by moving sent_at (INSERT ... ON CONFLICT guarded by the last one's time), so that
-- a tool posting every minute to a wrong URL costs its owner one message an hour, across replicas.
CREATE TABLE missing_channel_notices (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  sent_at timestamptz NOT NULL
);

-- Down Migration
DROP TABLE missing_channel_notices;
