-- Up Migration
-- Messages that trigger an outgoing webhook bot (a mention in a channel, a direct message to it),
-- written in the sending transaction and delivered to the bot's URL by whichever messaging
-- process claims them (`claimed_at` is its lease). A failed attempt waits until
-- `next_attempt_at`. A delivery is deleted once the bot answered or was given up on.
CREATE TABLE outgoing_webhook_deliveries (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  bot_id bigint NOT NULL,
  message_id bigint NOT NULL,
  trigger text NOT NULL,
  created_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  claimed_at timestamptz
);
CREATE INDEX outgoing_webhook_deliveries_due ON outgoing_webhook_deliveries (next_attempt_at, id);

-- Down Migration
DROP TABLE outgoing_webhook_deliveries;
