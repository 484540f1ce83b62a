import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/** A message as the server received it: the envelope, the bytes, and the bytes parsed. */
export interface ReceivedMessage {
  envelope: { from: string | null; to: string[] };
  /** Who logged in for it (null: nobody). */
  user: string | null;
  raw: Buffer;
  parsed: ParsedMail;
}

/** Where a refusal is answered: at the greeting, to RCPT TO, or after DATA. */
export type RefusalStep = 'greeting' | 'rcpt' | 'data';

export interface Refusal {
  step: RefusalStep;
  code: 421 | 450 | 451 | 550 | 554;
}

/**
 * A real SMTP server on loopback (smtp-server, as a relay would answer): it records every message
 * it accepts, refuses with the reply a test scripts, and can be down (its port refusing
 * connections) then up again at the same address.
 */
export interface TestSmtpServer {
  host: string;
  port: number;
  messages: ReceivedMessage[];
  /** Resolves with the `count`-th message received (1: the first), waiting for it. */
  message(count?: number): Promise<ReceivedMessage>;
  /** Every later conversation is refused so, until `accept()`. */
  refuse(refusal: Refusal): void;
  accept(): void;
  /** Stops listening; connections are refused until `up()`. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

export interface TestSmtpOptions {
  /** Only this user, with this password, may send (AUTH over the plain connection). */
  login?: { username: string; password: string };
}

function smtpError(code: number): Error & { responseCode: number } {
  const words: Record<number, string> = {
    421: 'Service not available, closing transmission channel',
    450: 'Requested mail action not taken: mailbox unavailable',
    451: 'Requested action aborted: local error in processing',
    550: 'No such user here',
    554: 'Transaction failed',
  };
  return Object.assign(new Error(words[code] ?? 'Refused'), { responseCode: code });
}

export async function startTestSmtpServer(options: TestSmtpOptions = {}): Promise<TestSmtpServer> {
  const messages: ReceivedMessage[] = [];
  const waiting: { count: number; resolve: (message: ReceivedMessage) => void }[] = [];
  let refusal: Refusal | null = null;
  const refused = (step: RefusalStep) =>
    refusal !== null && refusal.step === step ? smtpError(refusal.code) : null;

  const settings: SMTPServerOptions = {
    // Plain SMTP on loopback: the tests' relay is security `none`.
    secure: false,
    disabledCommands: options.login ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.login,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      const { login } = options;
      if (login && auth.username === login.username && auth.password === login.password) {
        callback(null, { user: auth.username });
        return;
      }
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onConnect(_session, callback) {
      callback(refused('greeting'));
    },
    onRcptTo(_address, _session, callback) {
      callback(refused('rcpt'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const refusal = refused('data');
        if (refusal) {
          callback(refusal);
          return;
        }
        const raw = Buffer.concat(chunks);
        const { mailFrom, rcptTo } = session.envelope;
        void simpleParser(raw).then((parsed) => {
          const message: ReceivedMessage = {
            envelope: {
              from: mailFrom ? mailFrom.address : null,
              to: rcptTo.map((to) => to.address),
            },
            user: typeof session.user === 'string' ? session.user : null,
            raw,
            parsed,
          };
          messages.push(message);
          for (const waiter of waiting.filter((w) => w.count === messages.length)) {
            waiter.resolve(message);
          }
          callback(null, 'OK: queued');
        }, callback);
      });
    },
  };

  let server = new SMTPServer(settings);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.server.address() as AddressInfo).port);
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  const port = await listen(0);
  let listening = true;

  return {
    host: '127.0.0.1',
    port,
    messages,
    message(count = 1) {
      const received = messages[count - 1];
      if (received) return Promise.resolve(received);
      return new Promise((resolve) => {
        waiting.push({ count, resolve });
      });
    },
    refuse(next) {
      refusal = next;
    },
    accept() {
      refusal = null;
    },
    async down() {
      if (!listening) return;
      listening = false;
      await close();
    },
    async up() {
      if (listening) return;
      server = new SMTPServer(settings);
      await listen(port);
      listening = true;
    },
    async stop() {
      if (!listening) return;
      listening = false;
      await close();
    },
  };
}
