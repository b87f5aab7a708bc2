-- Up Migration
-- Code playgrounds (Zulip's RealmPlayground): where the organization's users can open a code
-- block of a Pygments language. Zulip's unique_together (realm, pygments_language, name).
CREATE TABLE realm_playgrounds (
  id bigserial PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES realms (id),
  name text NOT NULL,
  pygments_language text NOT NULL,
  url_template text NOT NULL,
  UNIQUE (realm_id, pygments_language, name)
);

-- Down Migration
DROP TABLE realm_playgrounds;
