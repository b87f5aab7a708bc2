-- Up Migration
-- The key a password login (POST /fetch_api_key) issued, sealed under a key derived from the
-- owner's password (scrypt, AES-256-GCM; see sealApiKey), so that the next login with that
-- password returns the same key, as Zulip's single API key, instead of issuing one per login.
-- The stored hash stays what requests are checked against; without the password the sealed
-- copy reveals nothing more than the password hash does. NULL for every other key.
ALTER TABLE api_keys ADD COLUMN sealed text;

-- Down Migration
ALTER TABLE api_keys DROP COLUMN sealed;
