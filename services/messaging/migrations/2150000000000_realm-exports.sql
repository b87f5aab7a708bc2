-- Up Migration
-- Zulip's RealmExport: an administrator's request for a public data export of the organization,
-- made in the background by whichever messaging process claims it (`claimed_at` is its lease;
-- a process that died mid-export leaves it to be claimed again). The file lives in the uploads'
-- storage under `path_id` until the export is deleted.
CREATE TABLE realm_exports (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL,
  acting_user_id bigint NOT NULL,
  requested_at timestamptz NOT NULL,
  claimed_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  finished_at timestamptz,
  failed_at timestamptz,
  deleted_at timestamptz,
  path_id text,
  size bigint
);
CREATE INDEX realm_exports_realm ON realm_exports (realm_id, id);
CREATE INDEX realm_exports_pending ON realm_exports (id) WHERE finished_at IS NULL AND failed_at IS NULL AND deleted_at IS NULL;

-- Down Migration
DROP TABLE realm_exports;
