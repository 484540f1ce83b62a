// Stoplight Prism serving an OpenAPI document on loopback, for the OpenAPI import tests. It lives in
// infra/tools/prism-server.ts (with the gaps in Prism's checks the tests rely on knowing) because
// the benchmark starts it too, and infra/ may not import from test/.
export { startPrism, type PrismOptions, type PrismServer } from '../../infra/tools/prism-server.js';
