-- Up Migration
-- What a message sender's avatar_url is built from (Zulip's MessageDict.set_sender_avatar): the
-- avatar's source, version and uploaded image, and whether everyone may see the delivery email
-- (only then may a client compute the Gravatar itself). NULL email_public: not known yet.
--
-- A row carries them when avatar_synced_at equals synced_at: this release's upserts set both to
-- the transaction's now(), a previous release's only synced_at (during a rolling upgrade its pods
-- still apply accounts' events, avatar changes included). Other rows are read again from accounts
-- when read by id (queries/users.ts); emptying replica_realms has every organization's whole
-- list read again at its next realm-wide read.
ALTER TABLE users
  ADD COLUMN avatar_source text NOT NULL DEFAULT 'G',
  ADD COLUMN avatar_version integer NOT NULL DEFAULT 1,
  ADD COLUMN avatar_token text,
  ADD COLUMN email_public boolean,
  ADD COLUMN avatar_synced_at timestamptz;
DELETE FROM replica_realms;

-- Down Migration
ALTER TABLE users
  DROP COLUMN avatar_synced_at,
  DROP COLUMN email_public,
  DROP COLUMN avatar_token,
  DROP COLUMN avatar_version,
  DROP COLUMN avatar_source;
