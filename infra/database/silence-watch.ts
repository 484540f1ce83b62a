import type net from 'node:net';

/**
 * Drops a connection whose server has been silent for `silenceMs` while it was asked something.
 * Postgres ends its own long statements and idle transactions (statement_timeout, idle_in_
 * transaction_session_timeout), but a frozen server or a dead network path answers nothing at
 * all, and the TCP connection stays open: without this, a query would wait out the whole outage.
 * The bytes are counted on the TCP socket, which also sees them when TLS runs on top of it.
 * Closing the socket fails the queries on it with CONNECTION_CLOSED.
 *
 * The silence runs from the last byte read, or from the first byte written after it when that is
 * later: a pooled connection that rested before its next query has not been waiting for the
 * server while it rested, and a query sent after a rest gets the whole silence for its answer
 * (counted from the last read, a rest of 6 s left a query 1 s). Later writes with still nothing
 * read do not start it again, so a server that hangs under a stream of queries is still dropped.
 *
 * An elapsed silence is judged once more after the event loop's next poll for I/O: timers run
 * before reads in a turn of the loop, so an answer that arrived while this process was held up
 * (a long synchronous task, a machine too loaded to run it) is still unread when the tick sees
 * the time; it is not the server's silence.
 */
export function watchSilence(socket: net.Socket, silenceMs: number): void {
  let bytesRead = socket.bytesRead;
  let bytesWritten = socket.bytesWritten;
  let silentSince = Date.now();
  /** Whether something was written since the last read: the connection is waiting for an answer. */
  let asked = false;
  let judging = false;
  const heard = (): boolean => {
    if (socket.bytesRead === bytesRead) return false;
    bytesRead = socket.bytesRead;
    bytesWritten = socket.bytesWritten;
    silentSince = Date.now();
    asked = false;
    return true;
  };
  const timer = setInterval(
    () => {
      if (socket.destroyed) {
        clearInterval(timer);
        return;
      }
      if (judging || heard()) return;
      if (socket.bytesWritten !== bytesWritten) {
        bytesWritten = socket.bytesWritten;
        if (!asked) silentSince = Date.now();
        asked = true;
        return;
      }
      if (Date.now() - silentSince < silenceMs) return;
      judging = true;
      setImmediate(() => {
        judging = false;
        if (socket.destroyed || heard()) return;
        clearInterval(timer);
        socket.destroy();
      });
    },
    Math.min(250, silenceMs / 4),
  );
  timer.unref();
}
