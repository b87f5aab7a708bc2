-- Up Migration
-- Zulip's DefaultStream: the channels new users of an organization join.
CREATE TABLE default_streams (
  realm_id bigint NOT NULL,
  stream_id bigint NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
  PRIMARY KEY (realm_id, stream_id)
);

-- Down Migration
DROP TABLE default_streams;
