// The Temporal CLI with a Web UI that opens its port `delay` ms after the CLI started, as a UI
// that starts late on a loaded machine does: `node slow-ui-temporal.mjs <real cli> <delay ms>
// server start-dev … --ui-port N …`. The real UI runs on another port, and N forwards to it
// once the delay is over; the CLI's own lines are passed on with N in them.
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';

const [cli, delay, ...args] = process.argv.slice(2);
const at = args.indexOf('--ui-port');
const shown = args[at + 1];
const inner = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(String(port)));
  });
});
args[at + 1] = inner;
const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'inherit'] });
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk.toString().replaceAll(`:${inner}`, `:${shown}`));
});
const front = createServer((socket) => {
  const upstream = connect(Number(inner), '127.0.0.1');
  socket.pipe(upstream).pipe(socket);
  socket.on('error', () => upstream.destroy());
  upstream.on('error', () => socket.destroy());
});
const timer = setTimeout(() => front.listen(Number(shown), '127.0.0.1'), Number(delay));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => {
  clearTimeout(timer);
  front.close();
  process.exit(code ?? 1);
});
