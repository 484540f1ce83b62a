// The schema thread's entry: the sources are TypeScript, which a worker thread does not load by
// itself, so it hands over to them through tsx, as the `gatehouse` command and the tests do.
import { tsImport } from 'tsx/esm/api';

await tsImport('./schema-thread.ts', import.meta.url);
