-- Up Migration
-- A direct conversation's participants as an array, indexed, so that "whom does this user share
-- a conversation with" (limited guests' access to users, asked on register, typing, presence
-- and status events) reads the user's own conversations instead of matching every conversation
-- of the organization against a pattern. The statement that asks spells the same expression.
-- On an installation with many direct conversations create it beforehand with CREATE INDEX
-- CONCURRENTLY (docs/operating.md); this step then finds it there.
CREATE INDEX IF NOT EXISTS recipients_direct_participants ON recipients USING gin ((string_to_array(user_ids_key, ',')::bigint[])) WHERE user_ids_key IS NOT NULL;

-- Down Migration
DROP INDEX recipients_direct_participants;
