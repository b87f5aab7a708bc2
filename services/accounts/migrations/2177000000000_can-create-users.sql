-- Up Migration
-- Zulip's can_create_users: POST /users is for administrators the server's operator allowed to
-- create accounts with passwords (`chat user can-create-users`), not for every administrator.
ALTER TABLE users ADD COLUMN can_create_users boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE users DROP COLUMN can_create_users;
