-- Up Migration
-- Uploaded files. The bytes live in the file storage under `path_id`.
CREATE TABLE attachments (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  owner_id bigint NOT NULL,
  -- `<realm_id>/<2 hex>/<random>/<sanitized name>`; the URL is `/user_uploads/<path_id>`.
  path_id text NOT NULL UNIQUE,
  file_name text NOT NULL,
  content_type text NOT NULL,
  size bigint NOT NULL,
  create_time timestamptz NOT NULL
);
CREATE INDEX attachments_owner ON attachments (realm_id, owner_id, id);
CREATE INDEX attachments_create_time ON attachments (create_time);

-- Which messages link to an upload. No foreign key to messages: deletion releases explicitly,
-- and clean-ups treat a link to a vanished message as no link.
CREATE TABLE attachment_messages (
  realm_id bigint NOT NULL,
  attachment_id bigint NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
  message_id bigint NOT NULL,
  date_sent timestamptz NOT NULL,
  PRIMARY KEY (attachment_id, message_id)
);
CREATE INDEX attachment_messages_message ON attachment_messages (message_id);

-- Files whose attachment row is gone but whose bytes may still be in storage. Written in the
-- deleting transaction and drained after commit, so a crash in between leaks nothing.
CREATE TABLE attachment_file_deletions (
  path_id text PRIMARY KEY,
  realm_id bigint NOT NULL,
  requested_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE attachment_file_deletions;
DROP TABLE attachment_messages;
DROP TABLE attachments;
