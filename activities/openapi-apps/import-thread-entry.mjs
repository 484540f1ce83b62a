// The import worker's entry: the sources are TypeScript, which a worker thread does not load by
// itself, so it hands over to them through tsx, as the schema thread does.
import { tsImport } from 'tsx/esm/api';

await tsImport('./import-worker.ts', import.meta.url);
