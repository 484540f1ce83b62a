// `tsx infra/tools/check-import-cycles.ts` (part of `npm run check`): fails, naming each cycle,
// when the project's own files import each other in a circle.
import { importCycles, projectImportGraph } from './import-cycles.js';

const cycles = importCycles(projectImportGraph(process.cwd()));
if (cycles.length > 0) {
  console.error(
    `${cycles.length} import cycle(s); move what both sides need into a module below both:`,
  );
  for (const cycle of cycles) console.error(`  ${cycle.join(' → ')}`);
  process.exitCode = 1;
} else {
  console.log('No import cycles.');
}
