-- Up Migration
-- A channel narrow (`m.stream_id = $n ... ORDER BY m.id`) reads its messages in id order from
-- here. Without it PostgreSQL either walked the primary key filtering by channel (every other
-- channel's messages in between) or sorted the whole channel (bench/README.md, history).
-- Building it blocks writes to messages while it runs; on a large table create it beforehand
-- with CREATE INDEX CONCURRENTLY (docs/operating.md), and this step finds it there.
CREATE INDEX IF NOT EXISTS messages_stream ON messages (stream_id, id) WHERE stream_id IS NOT NULL;

-- Down Migration
DROP INDEX messages_stream;
