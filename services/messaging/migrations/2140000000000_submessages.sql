-- Up Migration
-- Zulip's submessages: the widget a message starts (`/poll`, `/todo`) and the votes, options and
-- tasks clients add to it (POST /submessage), in the order they came. Deleted with the message.
CREATE TABLE submessages (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  sender_id bigint NOT NULL,
  msg_type text NOT NULL,
  content text NOT NULL
);
CREATE INDEX submessages_message ON submessages (message_id, id);

-- Down Migration
DROP TABLE submessages;
