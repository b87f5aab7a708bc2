-- Up Migration
-- Email domain restrictions (Zulip's RealmDomain and the realm's emails_restricted_to_domains,
-- disallow_disposable_email_addresses): the domains whose addresses may join an organization,
-- stored lowercased, one row per domain; whether new users must have such an address; whether
-- addresses of known disposable email services are refused. Zulip's defaults: not restricted,
-- disposable addresses refused.
CREATE TABLE realm_domains (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  domain text NOT NULL,
  allow_subdomains boolean NOT NULL DEFAULT false,
  UNIQUE (realm_id, domain)
);

ALTER TABLE realms
  ADD COLUMN emails_restricted_to_domains boolean NOT NULL DEFAULT false,
  ADD COLUMN disallow_disposable_email_addresses boolean NOT NULL DEFAULT true;

-- Down Migration
ALTER TABLE realms
  DROP COLUMN emails_restricted_to_domains,
  DROP COLUMN disallow_disposable_email_addresses;
DROP TABLE realm_domains;
