-- Up Migration
-- The platform's outbox trigger (1000000000000_platform-outbox) notified at every commit that
-- wrote outbox rows. Relays no longer LISTEN: they are woken in their own process and poll for
-- the rest (packages/platform/src/outbox.ts). A NOTIFY takes one lock for the whole database
-- cluster at commit and holds it through the commit's WAL flush, so every transaction writing an
-- outbox row, in any schema, committed one after another (pgbench, 8 connections: half the
-- commits per second). Each service schema drops it in a migration of its own, which sorts after
-- its earlier ones.
DROP TRIGGER IF EXISTS outbox_notify ON outbox;
DROP FUNCTION IF EXISTS outbox_notify();

-- Down Migration
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(TG_TABLE_SCHEMA || '_outbox', '');
  RETURN NULL;
END $$;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
