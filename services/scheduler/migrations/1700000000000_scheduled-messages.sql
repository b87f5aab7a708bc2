-- Up Migration
-- Messages a user asked to send later. Delivered rows stay (with the message id they became)
-- so a repeated delivery attempt can be recognised; failed rows wait for a new delivery time.
CREATE TABLE scheduled_messages (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  sender_id bigint NOT NULL,
  recipient_type text NOT NULL CHECK (recipient_type IN ('stream', 'private')),
  stream_id bigint,
  user_ids bigint[],
  topic text,
  content text NOT NULL,
  rendered_content text NOT NULL,
  scheduled_at timestamptz NOT NULL,
  read_by_sender boolean,
  -- Client name of the scheduling request; messaging's read_by_sender default depends on it.
  sending_client text NOT NULL DEFAULT 'Unspecified',
  delivered boolean NOT NULL DEFAULT false,
  delivered_message_id bigint,
  failed boolean NOT NULL DEFAULT false,
  failure_message text,
  -- Counts failures, so each failure notice gets its own idempotency key.
  failure_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((recipient_type = 'stream') = (stream_id IS NOT NULL)),
  CHECK ((recipient_type = 'private') = (user_ids IS NOT NULL))
);

-- The delivery loop's scan: only rows still waiting to be sent.
CREATE INDEX scheduled_messages_due ON scheduled_messages (scheduled_at, id) WHERE NOT delivered AND NOT failed;
-- A sender's list (GET /scheduled_messages, register).
CREATE INDEX scheduled_messages_sender ON scheduled_messages (realm_id, sender_id, scheduled_at) WHERE NOT delivered;

-- Down Migration
DROP TABLE scheduled_messages;
