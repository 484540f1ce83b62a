-- Rate-limit counters shared by every API process (api/http/rate-limit.ts), in the layout
-- rate-limiter-flexible's RateLimiterPostgres reads and writes: `key` is
-- `<limiter>:<client address or API key id>` (never a key itself), `points` the requests counted
-- in the window, `expire` the window's end in epoch milliseconds. The library cleans up rows an
-- hour past `expire`.
--
-- Unlogged: every counted request updates a row, and a counter needs no crash safety or
-- replica; after a crash Postgres empties the table and the windows simply start again.
create unlogged table rate_limits (
  key varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);

create index rate_limits_expire_idx on rate_limits (expire);
