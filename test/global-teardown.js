import { tsImport } from 'tsx/esm/api';

export default async function globalTeardown() {
  const { stopStack } = await tsImport('./support/stop-stack.ts', import.meta.url);
  await stopStack();
}
