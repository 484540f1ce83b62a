-- The API keeps the keys it recognised in memory (api/http/key-cache.ts) and must hear of every
-- change to them: a revoked key, new scopes or access, a deleted key or environment. Triggers
-- announce each change on the channel `gatehouse_api_keys`, sent when the changing transaction
-- commits, whatever made it (the CLI, the API, SQL by hand). The payload is the key's id, never its
-- hash; `*` means "forget every key" (a truncate, an environment changed).
create function notify_api_key_change() returns trigger language plpgsql as $$
begin
  if tg_level = 'ROW' and tg_table_name = 'api_keys' then
    perform pg_notify('gatehouse_api_keys', old.id::text);
  else
    perform pg_notify('gatehouse_api_keys', '*');
  end if;
  return null;
end;
$$;

create trigger api_keys_changed after update or delete on api_keys
  for each row execute function notify_api_key_change();

create trigger api_keys_truncated after truncate on api_keys
  for each statement execute function notify_api_key_change();

-- A key's caller carries its environment's name.
create trigger environments_changed after update or delete or truncate on environments
  for each statement execute function notify_api_key_change();
