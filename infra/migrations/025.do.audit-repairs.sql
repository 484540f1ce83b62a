-- The seal once found an environment's last checkpoint by ordering last_seq as text ('78' after
-- '520'), so once seq passed a power of ten it chained new checkpoints to an old one: the chain
-- forked, overlapping checkpoints sealed the same events again, and `verify` failed on an
-- untouched trail. `gatehouse audit repair` mends such a trail without deleting anything: the
-- checkpoints off the chain are kept and marked superseded by a signed repair record, and their
-- ranges are sealed anew, chained to the last good checkpoint (README "Audit integrity").

-- One repair of one environment's chain: which checkpoints it took off the chain (ids and hashes,
-- so a checkpoint edited or deleted afterwards is named), the last good checkpoint it resealed
-- after, the checkpoints it sealed in their place, signed (Ed25519) over its canonical form.
-- `verify` honours a superseded mark only when a repair signed by a trusted key names that
-- checkpoint: a forger cannot take a checkpoint off the chain by setting a column.
create table audit_repairs (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  -- null when no checkpoint chained from the start of the trail.
  after_checkpoint_id uuid,
  after_seq bigint not null,
  superseded_ids uuid[] not null,
  -- Their hashes, 32 bytes each, in the same order.
  superseded_hashes bytea not null,
  resealed_ids uuid[] not null,
  hash bytea not null,
  key_id text not null,
  signature bytea not null,
  repaired_at timestamptz not null
);

alter table audit_checkpoints
  add column superseded_by uuid references audit_repairs (id),
  add column superseded_at timestamptz,
  add constraint audit_checkpoints_superseded_check
    check ((superseded_by is null) = (superseded_at is null));

-- A repair seals the superseded checkpoints' ranges anew with the same boundaries, so last_seq is
-- unique on the chain only. The listing, superseded ones included, still reads in last_seq order.
alter table audit_checkpoints drop constraint audit_checkpoints_environment_id_last_seq_key;
create unique index audit_checkpoints_chain_idx on audit_checkpoints (environment_id, last_seq)
  where superseded_at is null;
create index audit_checkpoints_seq_idx on audit_checkpoints (environment_id, last_seq);

-- A new checkpoint must extend the environment's chain: start it (after_seq 0, no previous hash)
-- when the chain is empty, or follow its newest checkpoint exactly. Whatever code seals, a fork
-- is refused at insert rather than found by `verify` later.
create function audit_checkpoint_extends_chain() returns trigger language plpgsql as $$
declare
  head record;
begin
  select last_seq, hash into head from audit_checkpoints
    where environment_id = new.environment_id and superseded_at is null
    order by last_seq desc limit 1;
  if not found then
    if new.after_seq <> 0 or new.previous_hash is not null then
      raise exception 'audit checkpoint % does not start the chain of environment %',
        new.id, new.environment_id using errcode = '23514';
    end if;
  elsif new.after_seq <> head.last_seq or new.previous_hash is distinct from head.hash then
    raise exception 'audit checkpoint % (after seq %) does not follow the newest checkpoint of environment % (seq %)',
      new.id, new.after_seq, new.environment_id, head.last_seq using errcode = '23514';
  end if;
  return new;
end;
$$;

create trigger audit_checkpoints_extend_chain before insert on audit_checkpoints
  for each row execute function audit_checkpoint_extends_chain();
