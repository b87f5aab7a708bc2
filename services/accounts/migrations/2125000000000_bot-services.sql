-- Up Migration
-- Outgoing webhook bots' services (Zulip's Service): where messaging POSTs the messages that
-- trigger the bot (base_url), in which format (interface: 1 Zulip's generic, 2 Slack's), and the
-- token sent along so the receiver can tell the request is ours. The token is kept as is, not
-- hashed like API keys: it is sent with every request and shown to the bot's administrators.
-- One service per bot (Zulip's model allows several but its API creates and edits only one);
-- the row stays when the bot is deactivated, so a reactivated bot works again.
CREATE TABLE bot_services (
  bot_id bigint PRIMARY KEY REFERENCES users (id),
  realm_id bigint NOT NULL REFERENCES realms (id),
  name text NOT NULL,
  base_url text NOT NULL,
  interface integer NOT NULL CHECK (interface IN (1, 2)),
  token text NOT NULL
);

-- Down Migration
DROP TABLE bot_services;
