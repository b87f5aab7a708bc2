-- Up Migration
-- DELETE /streams/{id} deactivates a channel as Zulip does: the row stays (its messages keep
-- their recipient), its subscriptions end, and it is renamed out of the way so that the name can
-- be used again.
ALTER TABLE streams ADD COLUMN deactivated boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE streams DROP COLUMN deactivated;
