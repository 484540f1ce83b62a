// What the senders read, against a real Postgres: notificationTargets (routes, channels, the people
// known from their sign-ins, the approver role mappings and opt-outs, read and routed), the
// channels with their secrets open, and a Teams webhook opened by its route.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ensureEnvironment } from '../../activities/db/environments.js';
import {
  openNotificationChannels,
  setNotificationChannel,
} from '../../activities/db/notification-channels.js';
import { addNotificationOptOut } from '../../activities/db/notification-opt-outs.js';
import {
  replaceNotificationRoutes,
  teamsWebhookUrl,
} from '../../activities/db/notification-routes.js';
import { upsertPerson } from '../../activities/db/people.js';
import { setGroupRoles } from '../../activities/db/role-mappings.js';
import { notificationTargets } from '../../activities/notifications/notification-targets.js';
import type { Keyring } from '../../infra/encryption.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let environmentId: string;
let otherEnvironmentId: string;
const keyring: Keyring = { current: { id: 'k1', key: randomBytes(32) } };
const admin = { label: 'admin', keyAgentId: 'admin' };
const cli = { label: 'cli', keyAgentId: null };
const TEAMS_URL = 'https://prod-1.westeurope.logic.azure.com/workflows/w?sig=TopSecretSignature';

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  environmentId = (await ensureEnvironment(db.sql, 'targets')).id;
  otherEnvironmentId = (await ensureEnvironment(db.sql, 'targets-other')).id;
  const person = (email: string, groups: string[], issuer = 'https://idp.example') =>
    upsertPerson(db.sql, { issuer, subject: email, email, name: email, groups });
  await person('Alice@Example.com', ['approvers']);
  await person('bob@example.com', ['finance']);
  await person('carol@example.com', ['approvers', 'finance']);
  // Carol once signed in through another issuer, in another group: the latest sign-in counts.
  await db.sql`
    insert into people (id, issuer, subject, email, name, groups, last_sign_in_at)
    values (gen_random_uuid(), 'https://old-idp.example', 'carol', 'carol@example.com', 'Carol',
      '{legacy}', now() - interval '1 day')`;
  await setGroupRoles(db.sql, environmentId, 'approvers', ['approver']);
  await setGroupRoles(db.sql, environmentId, 'finance', ['approver']);
  await setGroupRoles(db.sql, environmentId, 'legacy', ['approver']);
});

const approval = (requestedFrom: string[]) => ({
  id: 'a0000000-0000-7000-8000-000000000001',
  requested_from: requestedFrom,
});

describe('notificationTargets', () => {
  it('answers nothing while no channel is set, whatever the routes', async () => {
    await replaceNotificationRoutes(
      db.sql,
      keyring,
      environmentId,
      'group:finance',
      'email',
      [{ type: 'each_person' }],
      admin,
    );
    expect(await notificationTargets(db.sql, environmentId, approval(['group:finance']))).toEqual(
      [],
    );
  });

  it('routes through what is set: the known members, their opt-outs, approvers when nobody is named', async () => {
    await setNotificationChannel(
      db.sql,
      keyring,
      environmentId,
      {
        kind: 'email',
        host: '127.0.0.1',
        port: 25,
        security: 'none',
        username: 'relay',
        password: 'relay-secret',
        senderAddress: 'approvals@example.com',
        senderName: null,
      },
      admin,
    );
    await setNotificationChannel(db.sql, keyring, environmentId, { kind: 'teams' }, cli);
    await replaceNotificationRoutes(
      db.sql,
      keyring,
      environmentId,
      '*',
      'email',
      [{ type: 'address', address: 'approvals-desk@example.com' }],
      cli,
    );
    await replaceNotificationRoutes(
      db.sql,
      keyring,
      environmentId,
      'group:finance',
      'teams',
      [{ type: 'webhook', url: TEAMS_URL }],
      admin,
    );
    await addNotificationOptOut(db.sql, environmentId, 'Bob@example.com', 'email', 'person:bob');
    // Another environment's opt-out of Carol changes nothing here.
    await addNotificationOptOut(db.sql, otherEnvironmentId, 'carol@example.com', 'email', 'cli');

    const finance = await notificationTargets(
      db.sql,
      environmentId,
      approval(['group:finance', 'person:Dora@Example.com']),
    );
    expect(
      finance.map(({ channel, addressee, to, keyAgentId }) => ({
        channel,
        addressee,
        to,
        keyAgentId,
      })),
    ).toEqual([
      // Bob opted out of e-mail; Carol is known in finance by her latest sign-in.
      {
        channel: 'email',
        addressee: 'group:finance',
        to: { email: 'carol@example.com' },
        keyAgentId: 'admin',
      },
      {
        channel: 'email',
        addressee: 'group:finance',
        to: { email: 'approvals-desk@example.com' },
        keyAgentId: null,
      },
      {
        channel: 'teams',
        addressee: 'group:finance',
        to: { teamsWebhookRef: expect.any(String) },
        keyAgentId: 'admin',
      },
    ]);
    // Dora never signed in and no route names her or asks each person through *: nothing more.

    // Nobody named: every approver (approvers, finance and legacy hold the role), as role:approver.
    const anyone = await notificationTargets(db.sql, environmentId, approval([]));
    expect(anyone.map((target) => [target.addressee, target.channel, target.to])).toEqual([
      ['role:approver', 'email', { email: 'approvals-desk@example.com' }],
      ['role:approver', 'email', { email: 'carol@example.com' }],
      ['role:approver', 'teams', { teamsWebhookRef: expect.any(String) }],
    ]);
    // The same destination has the same key whoever it answers.
    expect(anyone.find((t) => t.to.email === 'carol@example.com')?.key).toBe(
      finance.find((t) => t.to.email === 'carol@example.com')?.key,
    );
    // Nothing in a target is secret: it may travel through Temporal.
    expect(JSON.stringify([finance, anyone])).not.toMatch(/TopSecret|relay-secret|logic\.azure/);

    // Another environment has none of this.
    expect(
      await notificationTargets(db.sql, otherEnvironmentId, approval(['group:finance'])),
    ).toEqual([]);
  });

  it('opens the Teams webhook by its route, kept when the same webhook is set again', async () => {
    const [target] = (
      await notificationTargets(db.sql, environmentId, approval(['group:finance']))
    ).filter((t) => t.channel === 'teams');
    const ref = target?.to.teamsWebhookRef ?? '';
    expect(await teamsWebhookUrl(db.sql, keyring, environmentId, ref)).toBe(TEAMS_URL);
    // Not from another environment, nor from a ref that is no route.
    expect(await teamsWebhookUrl(db.sql, keyring, otherEnvironmentId, ref)).toBeNull();
    expect(await teamsWebhookUrl(db.sql, keyring, environmentId, 'not-a-uuid')).toBeNull();
    // Set again (by the CLI now): the same route, now the CLI's.
    const again = await replaceNotificationRoutes(
      db.sql,
      keyring,
      environmentId,
      'group:finance',
      'teams',
      [{ type: 'webhook', url: TEAMS_URL }],
      cli,
    );
    expect(again.map((route) => [route.id, route.keyAgentId])).toEqual([[ref, null]]);
    // Replaced by another webhook: the old route is gone, and a delivery naming it finds nothing.
    await replaceNotificationRoutes(
      db.sql,
      keyring,
      environmentId,
      'group:finance',
      'teams',
      [{ type: 'webhook', url: `${TEAMS_URL}2` }],
      cli,
    );
    expect(await teamsWebhookUrl(db.sql, keyring, environmentId, ref)).toBeNull();
    // A sealed webhook copied to another route does not open there.
    const [copy] = await db.sql<{ id: string }[]>`
      insert into notification_routes (id, environment_id, audience, kind, target, value,
        webhook_url_sealed, destination, updated_by)
      select gen_random_uuid(), environment_id, 'group:copied', kind, target, value,
        webhook_url_sealed, destination, 'test'
      from notification_routes where environment_id = ${environmentId} and kind = 'teams'
      returning id`;
    await expect(teamsWebhookUrl(db.sql, keyring, environmentId, copy?.id ?? '')).rejects.toThrow();
  });

  it('opens the channels’ secrets for the senders, with who set each', async () => {
    await setNotificationChannel(
      db.sql,
      keyring,
      environmentId,
      {
        kind: 'slack',
        botToken: 'xoxb-1-2-token',
        signingSecret: 'a'.repeat(32),
        apiBaseUrl: 'https://slack.com/api/',
      },
      cli,
    );
    expect(await openNotificationChannels(db.sql, keyring, environmentId)).toEqual({
      email: {
        keyAgentId: 'admin',
        host: '127.0.0.1',
        port: 25,
        security: 'none',
        username: 'relay',
        password: 'relay-secret',
        senderAddress: 'approvals@example.com',
        senderName: null,
      },
      slack: {
        keyAgentId: null,
        botToken: 'xoxb-1-2-token',
        signingSecret: 'a'.repeat(32),
        apiBaseUrl: 'https://slack.com/api/',
      },
      teams: true,
    });
    expect(await openNotificationChannels(db.sql, keyring, otherEnvironmentId)).toEqual({
      email: null,
      slack: null,
      teams: false,
    });
    // A password sealed for this environment does not open as another's.
    await setNotificationChannel(
      db.sql,
      keyring,
      otherEnvironmentId,
      {
        kind: 'email',
        host: '127.0.0.1',
        port: 25,
        security: 'none',
        username: 'relay',
        password: 'other',
        senderAddress: 'a@example.com',
        senderName: null,
      },
      cli,
    );
    await db.sql`
      update notification_channels set smtp_password_sealed = (
        select smtp_password_sealed from notification_channels
        where environment_id = ${environmentId} and kind = 'email')
      where environment_id = ${otherEnvironmentId} and kind = 'email'`;
    await expect(openNotificationChannels(db.sql, keyring, otherEnvironmentId)).rejects.toThrow();
  });
});
