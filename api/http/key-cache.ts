import { randomUUID } from 'node:crypto';
import { findCallerByKey, keyHash, type Caller } from '../../activities/db/api-keys.js';
import type { Sql } from '../../infra/database/client.js';

/** Where migration 021's triggers announce every change to a key or an environment. */
export const KEY_CHANGES_CHANNEL = 'gatehouse_api_keys';

/**
 * The documented bound (README "Keys and access"): a key revoked, re-scoped or deleted is
 * refused by every API process at most this long after the change commits. Normally the
 * notification arrives within milliseconds; the bound holds when it cannot (see `serving`).
 */
export const KEY_CHANGE_BOUND_MS = 2000;
/** How often a process in use checks that it still hears the channel. */
const HEARTBEAT_MS = 500;
/** Heartbeats stop once no request has needed a key for this long: an idle API costs nothing. */
const IDLE_AFTER_MS = 10_000;
/** A backstop for changes no trigger sees (none known): an entry is read again after a minute. */
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  caller: Caller;
  readAt: number;
}

/**
 * The keys this API process has recognised, so that a request need not read its key from Postgres:
 * by the key's SHA-256, live keys only (a wrong key always costs a lookup, which the
 * failed-authentication limit counts), at most 10,000, each for a minute at most.
 *
 * Every change to a key reaches the process on `LISTEN gatehouse_api_keys` and drops the key.
 * A notification can be lost while the listening connection is down or silently cut off, so
 * the cache serves only while it can prove it would have heard: every 500 ms the process sends
 * a heartbeat notification of its own on the same channel from the pool, and Postgres delivers
 * notifications in commit order, so a heartbeat heard means every change committed before it
 * was sent has been heard too. Entries are served only while the newest heartbeat heard was
 * sent within the bound; otherwise each request reads its key as before. A connection that
 * listens again (postgres.js re-listens after a drop) starts with an empty cache, and a read
 * that was under way when anything was dropped is not kept (`generation`).
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly id = randomUUID();
  /** Heartbeats sent and not yet heard: sequence number → when it was sent. */
  private readonly sent = new Map<number, number>();
  private sequence = 0;
  /** When the newest heartbeat heard was sent (epoch ms). */
  private newestHeard = 0;
  /** Bumped by every drop: a read started under an older generation is not kept. */
  private generation = 0;
  private listening: Promise<unknown> | null = null;
  private usedAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly sql: Sql) {}

  /** The live key's caller, or null for an unknown or revoked key. */
  async caller(key: string): Promise<Caller | null> {
    const now = Date.now();
    this.usedAt = now;
    this.start();
    const hash = keyHash(key).toString('base64url');
    const entry = this.entries.get(hash);
    if (entry) {
      this.entries.delete(hash);
      if (this.serving(now) && now - entry.readAt < TTL_MS) {
        // Most recently used last, so that the bound drops the least used first.
        this.entries.set(hash, entry);
        return entry.caller;
      }
    }
    const generation = this.generation;
    const caller = await findCallerByKey(this.sql, key);
    if (caller && generation === this.generation) {
      this.entries.set(hash, { caller, readAt: now });
      if (this.entries.size > MAX_ENTRIES) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
    }
    return caller;
  }

  /**
   * When the newest heartbeat heard was sent (epoch ms): every change committed before then has
   * been heard, and entries are served until the bound after it.
   */
  get heardUpTo(): number {
    return this.newestHeard;
  }

  /** Whether a heartbeat sent within the bound has been heard. */
  private serving(now: number): boolean {
    return now - this.newestHeard <= KEY_CHANGE_BOUND_MS;
  }

  private start(): void {
    if (this.listening) return;
    this.listening = this.sql
      .listen(
        KEY_CHANGES_CHANNEL,
        (payload) => {
          this.heard(payload);
        },
        () => {
          this.forget();
        },
      )
      .catch(() => {
        // Not listening: nothing is cached, and the next request tries again.
        this.listening = null;
      });
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.beat();
    }, HEARTBEAT_MS);
    this.timer.unref();
    this.beat();
  }

  private beat(): void {
    const now = Date.now();
    if (now - this.usedAt > IDLE_AFTER_MS) return;
    for (const [sequence, sentAt] of this.sent) {
      if (now - sentAt <= KEY_CHANGE_BOUND_MS) break;
      this.sent.delete(sequence);
    }
    this.sequence += 1;
    this.sent.set(this.sequence, now);
    this
      .sql`select pg_notify(${KEY_CHANGES_CHANNEL}, ${`beat:${this.id}:${String(this.sequence)}`})`.catch(
      (error: unknown) => {
        // The pool was ended: so is its listening connection, and this cache with it.
        if ((error as { code?: unknown }).code === 'CONNECTION_ENDED') this.stop();
      },
    );
  }

  private heard(payload: string): void {
    if (payload.startsWith('beat:')) {
      const [, from, sequence] = payload.split(':');
      const sentAt = from === this.id ? this.sent.get(Number(sequence)) : undefined;
      if (sentAt !== undefined) this.newestHeard = Math.max(this.newestHeard, sentAt);
      return;
    }
    if (payload === '*') {
      this.forget();
      return;
    }
    this.generation += 1;
    for (const [hash, entry] of this.entries) {
      if (entry.caller.keyId === payload) this.entries.delete(hash);
    }
  }

  /** On (re)listening and on `*`: whatever was missed, nothing cached survives it. */
  private forget(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.entries.clear();
  }
}

/**
 * One cache per pool: postgres.js listens on one connection per pool, which `sql.end()` closes,
 * and the authentication checks the app mounts (`/v1`, the proxy, MCP) share what they learn.
 */
const caches = new WeakMap<Sql, KeyCache>();

export function keyCacheOf(sql: Sql): KeyCache {
  let cache = caches.get(sql);
  if (!cache) {
    cache = new KeyCache(sql);
    caches.set(sql, cache);
  }
  return cache;
}
