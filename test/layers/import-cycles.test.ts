import { describe, expect, it } from '@jest/globals';
import { importCycles, projectImportGraph } from '../../infra/tools/import-cycles.js';

describe('import cycles (the layers only point down)', () => {
  it('finds none among the project’s own files, type-only imports included', () => {
    expect(importCycles(projectImportGraph(process.cwd()))).toEqual([]);
  });

  it('names each cycle as the walk around it', () => {
    const graph = new Map([
      ['api/app.ts', ['api/routes/actions.ts', 'api/deps.ts']],
      ['api/routes/actions.ts', ['api/app.ts', 'api/deps.ts']],
      ['api/deps.ts', []],
      ['workflows/webhook.ts', ['activities/index.ts']],
      ['activities/index.ts', ['activities/webhooks/start-delivery.ts']],
      ['activities/webhooks/start-delivery.ts', ['workflows/webhook.ts']],
      ['self.ts', ['self.ts']],
    ]);
    expect(importCycles(graph)).toEqual([
      [
        'activities/index.ts',
        'activities/webhooks/start-delivery.ts',
        'workflows/webhook.ts',
        'activities/index.ts',
      ],
      ['api/app.ts', 'api/routes/actions.ts', 'api/app.ts'],
      ['self.ts', 'self.ts'],
    ]);
  });
});
