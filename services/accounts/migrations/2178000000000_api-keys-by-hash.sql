-- Up Migration
-- An integration URL carries a bot's API key without its email (`?api_key=...`, as Zulip's
-- webhook URLs do): the key alone finds its user, by its hash.
CREATE INDEX api_keys_key_hash ON api_keys (key_hash);

-- Down Migration
DROP INDEX api_keys_key_hash;
