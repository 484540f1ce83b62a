// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Workflow code is replayed: it must stay deterministic and sandbox-safe. No Node built-ins,
    // no I/O libraries, and activities only as types (the worker provides the implementations).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflows must not use Node built-ins.',
          })),
          patterns: [
            {
              group: [
                '**/activities/**',
                '**/activities',
                '**/api/**',
                '**/worker/**',
                '**/infra/**',
              ],
              message: 'Workflows may import activities only as types (import type).',
              allowTypeImports: true,
            },
            {
              group: [
                'postgres',
                'express',
                'pino',
                'pino-http',
                'openid-client',
                'oauth4webapi',
                'uuid',
              ],
              message: 'Workflows must not do I/O or use non-deterministic libraries.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
