/** The module the caller's bundler resolves to the key it was given (test/nexus/caller-stack.ts). */
declare module 'gatehouse-caller-key' {
  export const gatehouseApiKey: string;
}
