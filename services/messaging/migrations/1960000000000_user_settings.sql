-- Up Migration
-- Replica of the few personal settings messaging honours (drafts synchronization, automatic
-- topic visibility), fed by accounts' `accounts.user_settings.updated` events. `settings` holds
-- only the names known so far: a missing one is read through from accounts and then kept.
CREATE TABLE user_settings (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX user_settings_realm_user ON user_settings (realm_id, user_id);

-- Down Migration
DROP TABLE user_settings;
