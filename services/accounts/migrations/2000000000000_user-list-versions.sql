-- Up Migration
-- A version per organization of everything its formatted user list (register's realm_users,
-- realm_non_active_users and cross_realm_bots; GET /users) is made of: users, their email
-- visibility setting, custom profile fields and their values. Each accounts process keeps the
-- list formatted and reuses it while the version it was read at is still the current one.
--
-- Triggers move the version, so no write path can forget to. They are deferred constraint
-- triggers: the version row is locked only while the writing transaction commits, after every
-- other lock it takes, so two transactions changing users of one organization queue for it but
-- never deadlock on it. A version is only ever increased, in commit order.
CREATE TABLE user_list_versions (
  realm_id bigint PRIMARY KEY REFERENCES realms (id),
  version bigint NOT NULL
);

CREATE FUNCTION bump_user_list_version() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  realm bigint;
BEGIN
  IF TG_OP = 'DELETE' THEN
    realm := OLD.realm_id;
  ELSE
    realm := NEW.realm_id;
  END IF;
  INSERT INTO user_list_versions AS v (realm_id, version) VALUES (realm, 1)
  ON CONFLICT (realm_id) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER users_list_version
  AFTER INSERT OR UPDATE OR DELETE ON users
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_user_list_version();

CREATE CONSTRAINT TRIGGER custom_profile_fields_list_version
  AFTER INSERT OR UPDATE OR DELETE ON custom_profile_fields
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_user_list_version();

CREATE CONSTRAINT TRIGGER custom_profile_field_values_list_version
  AFTER INSERT OR UPDATE OR DELETE ON custom_profile_field_values
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_user_list_version();

-- Of a user's settings only the email visibility shows in the list.
CREATE CONSTRAINT TRIGGER user_settings_list_version
  AFTER INSERT OR DELETE ON user_settings
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_user_list_version();

CREATE CONSTRAINT TRIGGER user_settings_visibility_list_version
  AFTER UPDATE ON user_settings
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN (OLD.settings -> 'email_address_visibility' IS DISTINCT FROM NEW.settings -> 'email_address_visibility')
  EXECUTE FUNCTION bump_user_list_version();

-- Down Migration
DROP TRIGGER user_settings_visibility_list_version ON user_settings;
DROP TRIGGER user_settings_list_version ON user_settings;
DROP TRIGGER custom_profile_field_values_list_version ON custom_profile_field_values;
DROP TRIGGER custom_profile_fields_list_version ON custom_profile_fields;
DROP TRIGGER users_list_version ON users;
DROP FUNCTION bump_user_list_version();
DROP TABLE user_list_versions;
