-- Up Migration
-- A bot's email address is visible to everyone, whatever the organization's default for new users
-- (Zulip creates bots with email_address_visibility "everyone", and their API email is always the
-- real one). Bots created while that default was narrower stored it, which hid their
-- delivery_email from users who saw the same address as their email. Without the stored value
-- they have the default, everyone. The user-list triggers bump the organization's list version.
UPDATE user_settings s SET settings = s.settings - 'email_address_visibility'
  FROM users u
 WHERE u.id = s.user_id AND u.is_bot AND s.settings ? 'email_address_visibility';

-- Down Migration
-- Nothing to restore: the removed values hid what Zulip shows.
SELECT 1;
