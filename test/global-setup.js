// Jest loads global set-up outside its own module system (no transform, no module mapper), so
// this file hands over to the TypeScript set-up through tsx, like the `gatehouse` command does.
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { startStack } = await tsImport('./support/start-stack.ts', import.meta.url);
  await startStack();
}
