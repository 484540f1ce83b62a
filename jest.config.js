/** Jest runs the TypeScript sources as native ESM through swc (see README: "Tests"). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
      },
    ],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
  // A bound for a hang, never a measure: on a 2-core machine that another full run shares, a
  // file's set-up (database, worker, API, third parties) has taken more than a minute.
  testTimeout: 120_000,
  maxWorkers: 2,
  // Each file imports the service anew into the worker's module registry, which jest never
  // shrinks: a worker that has grown past this is replaced between files, not killed mid-file.
  workerIdleMemoryLimit: '1536MB',
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
};
