/**
 * A loopback port where connections are refused, for tests of a server nobody answers at: port 1
 * (tcpmux), which nothing on a test machine serves and which is never handed out as a free port
 * (those come from the ephemeral range, above 1023). A free port chosen and left closed is not
 * that: any program (another test's server, the local end of an outgoing connection) may be on
 * it by the time it is called.
 */
export const REFUSED_PORT = 1;
