-- Up Migration
-- An organization's users by when they joined: messaging's digest job asks accounts, a page of
-- recipients at a time, how many people joined each organization in the past week, which without
-- this read every user of the organization.
CREATE INDEX IF NOT EXISTS users_realm_date_joined ON users (realm_id, date_joined);

-- Down Migration
DROP INDEX users_realm_date_joined;
