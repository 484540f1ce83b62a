// The watch that drops a Postgres connection whose server has gone silent (a frozen server, a
// dead network path), on a real loopback connection whose server end the test writes from. Its
// clock is the test's (jest's fake Date and setInterval); the sockets and the event loop are
// real, so what the watch can and cannot have read when it judges is what it would be in use.
import net from 'node:net';
import { setTimeout as realTimeout } from 'node:timers';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { watchSilence } from '../../infra/database/silence-watch.js';

const SILENCE_MS = 4000;

let server: net.Server;
let client: net.Socket;
let peer: net.Socket;

beforeEach(async () => {
  server = net.createServer();
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  client = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => client.once('connect', resolve));
  peer = await accepted;
  // A dropped connection resets its other end: expected here, not a failure of the run.
  for (const socket of [client, peer]) socket.on('error', () => undefined);
  // Only the clock and the watch's own interval: the event loop's I/O and phases stay real.
  jest.useFakeTimers({
    doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'hrtime'],
  });
  watchSilence(client, SILENCE_MS);
});

afterEach(async () => {
  jest.useRealTimers();
  client.destroy();
  peer.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** What the client end receives next, read by the event loop. */
function received(socket: net.Socket): Promise<Buffer> {
  return new Promise((resolve) => socket.once('data', resolve));
}

/** Lets the event loop run through its phases twice: a pending read, then a deferred check. */
async function turns(): Promise<void> {
  for (let i = 0; i < 2; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Moves the clock on from the timers phase of the event loop, where the watch's ticks run in use:
 * what the server sent just before (`meanwhile`) is then still unread, as after a stalled loop.
 */
function advanceInTimersPhase(ms: number, meanwhile?: () => void): Promise<void> {
  return new Promise((resolve) => {
    realTimeout(() => {
      meanwhile?.();
      jest.advanceTimersByTime(ms);
      resolve();
    }, 0);
  });
}

describe('the silence watch on a Postgres connection', () => {
  it('drops a connection whose server answers nothing for the whole silence', async () => {
    const asked = received(peer);
    client.write('query');
    await asked;
    await advanceInTimersPhase(SILENCE_MS + 500);
    await turns();
    expect(client.destroyed).toBe(true);
  });

  it('drops it also while more queries keep being sent to the silent server', async () => {
    const asked = received(peer);
    client.write('query');
    await asked;
    jest.advanceTimersByTime(SILENCE_MS / 2);
    const askedAgain = received(peer);
    client.write('another query');
    await askedAgain;
    await advanceInTimersPhase(SILENCE_MS / 2 + 500);
    await turns();
    expect(client.destroyed).toBe(true);
  });

  it('counts the silence from a request sent after a rest, not from the answer before it', async () => {
    const answered = received(client);
    peer.write('answer');
    await answered;
    jest.advanceTimersByTime(250);
    // Resting in the pool, less than the silence, as the pool's idle timeout allows.
    jest.advanceTimersByTime(SILENCE_MS - 1000);
    const asked = received(peer);
    client.write('query');
    await asked;
    // The server takes half the silence to answer: rest and wait together are longer than it.
    await advanceInTimersPhase(SILENCE_MS / 2);
    await turns();
    expect(client.destroyed).toBe(false);
  });

  it('does not take an answer that came while the process was held up for silence', async () => {
    const asked = received(peer);
    client.write('query');
    await asked;
    jest.advanceTimersByTime(250);
    // The answer is in the socket's buffer, unread: the process was busy (a blocked event loop,
    // a loaded machine) for longer than the silence, and its timers run before its reads.
    await advanceInTimersPhase(SILENCE_MS + 500, () => peer.write('answer'));
    await turns();
    expect(client.destroyed).toBe(false);
    // Heard: the silence starts again from the answer.
    await advanceInTimersPhase(SILENCE_MS - 500);
    await turns();
    expect(client.destroyed).toBe(false);
  });
});
