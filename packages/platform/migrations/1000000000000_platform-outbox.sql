-- Up Migration
-- The transactional outbox: rows are written in the business transaction, published by the relay.
CREATE TABLE outbox (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  type text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  realm_id bigint NOT NULL,
  payload jsonb NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL;

-- Wake the relay at commit instead of making it poll hard.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(TG_TABLE_SCHEMA || '_outbox', '');
  RETURN NULL;
END $$;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

-- Consumers record envelope ids in the same transaction as their work (idempotency).
CREATE TABLE processed_events (
  consumer text NOT NULL,
  event_id uuid NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);

-- Down Migration
DROP TABLE processed_events;
DROP TRIGGER outbox_notify ON outbox;
DROP FUNCTION outbox_notify();
DROP TABLE outbox;
