// Preloaded (`node --import`) into a server this project did not write that must be told its
// ports, because it names them in what it serves (metadata its clients follow). A port chosen
// free by the test and bound later by the server could be taken in between; so the test gives
// ports it holds itself (proxies in front of the server), listed in LISTEN_ANY_PORT_FOR, and a
// listen on one of them binds a free port instead (port 0), reported on stdout once bound:
// `listening-any-port <port asked> <port bound>`.
import net from 'node:net';
import process from 'node:process';

const asked = new Set(
  (process.env.LISTEN_ANY_PORT_FOR ?? '')
    .split(',')
    .filter(Boolean)
    .map((port) => Number(port)),
);
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const [first] = args;
  const port =
    typeof first === 'number' || typeof first === 'string'
      ? Number(first)
      : typeof first === 'object' && first !== null && 'port' in first
        ? Number(first.port)
        : Number.NaN;
  if (!asked.has(port)) return listen.apply(this, args);
  this.once('listening', () => {
    process.stdout.write(`listening-any-port ${String(port)} ${String(this.address().port)}\n`);
  });
  const rest = args.slice(1);
  return typeof first === 'object'
    ? listen.call(this, { ...first, port: 0 }, ...rest)
    : listen.call(this, 0, ...rest);
};
