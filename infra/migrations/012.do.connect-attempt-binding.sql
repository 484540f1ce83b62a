-- An OAuth attempt belongs to the browser that started it: `/connect/<token>/start` sets a cookie
-- named after `browser_ref` whose value only that browser holds; its SHA-256 is kept here and the
-- callback must bring the value back. Attempts started before this migration have neither and are
-- refused at the callback (the user opens the link again; attempts live 15 minutes).
alter table oauth_attempts add column browser_ref text;
alter table oauth_attempts add column browser_secret_hash bytea;

-- The app's stable id of the account a connection was authorised with (an OpenID `sub`, or the
-- user id the catalog says how to read), sealed like the tokens and bound to the connection id.
-- A reconnect must bring the same account. Null: connected before this migration, or an app
-- whose catalog entry does not say how to learn it; such a connection is re-authorised without
-- a comparison, and the account learned then is kept.
alter table connections add column account_id_sealed text;
