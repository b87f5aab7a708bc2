-- Up Migration
-- The channels the organization's automated announcements go to (Zulip's
-- new_stream_announcements_stream, signup_announcements_stream and
-- zulip_update_announcements_stream): messaging's channel ids, NULL when disabled (-1 to
-- clients). A deleted channel is cleared when messaging announces the deletion.
ALTER TABLE realms
  ADD COLUMN new_stream_announcements_stream_id bigint,
  ADD COLUMN signup_announcements_stream_id bigint,
  ADD COLUMN zulip_update_announcements_stream_id bigint;

-- Down Migration
ALTER TABLE realms
  DROP COLUMN new_stream_announcements_stream_id,
  DROP COLUMN signup_announcements_stream_id,
  DROP COLUMN zulip_update_announcements_stream_id;
