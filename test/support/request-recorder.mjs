// Preloaded (`node --import`) into a server this project did not write, so a test can read what
// it received: each request's port, method, URL, Authorization header and parsed body (the
// server's own body parsers fill `req.body`), appended as one JSON line to
// RECORD_REQUESTS_TO once the answer is sent. A proxy cannot stand in front of the SDK's example
// server: it advertises its own port in the metadata its clients follow.
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import process from 'node:process';

const file = process.env.RECORD_REQUESTS_TO;
const emit = http.Server.prototype.emit;

http.Server.prototype.emit = function (event, ...args) {
  if (event === 'request' && file) {
    const [req, res] = args;
    const address = this.address();
    res.on('finish', () => {
      const line = {
        port: typeof address === 'object' && address ? address.port : null,
        method: req.method,
        url: req.originalUrl ?? req.url,
        authorization: req.headers.authorization ?? null,
        body: req.body ?? null,
        status: res.statusCode,
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    });
  }
  return emit.call(this, event, ...args);
};
