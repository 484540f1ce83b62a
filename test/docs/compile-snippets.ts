import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT, where, type CodeBlock } from './doc-blocks.js';

/** One block's result: its diagnostics, each already naming the doc's file and line. */
export interface CompiledBlock {
  block: CodeBlock;
  /** `README.md:130: error TS2345: Argument of type …`, empty when it compiles. */
  failures: string[];
}

/** The repository's own compiler options (tsconfig.json), as `npm run check` uses them. */
function repositoryOptions(): ts.CompilerOptions {
  const file = path.join(REPO_ROOT, 'tsconfig.json');
  const read = ts.readConfigFile(file, (name) => ts.sys.readFile(name));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, REPO_ROOT);
  return parsed.options;
}

/** `api/README.md` line 12 → `api/README-L12.ts`: the doc's own folder, below the temp root. */
function snippetPath(tempRoot: string, block: CodeBlock): string {
  const { dir, name } = path.posix.parse(block.doc.path);
  return path.join(tempRoot, dir, `${name}-L${String(block.firstLine)}.ts`);
}

/**
 * Type-checks each block as a module of its own, all in one TypeScript program (one load of the
 * libraries and the package for every block, which is what makes it fast).
 *
 * The blocks are written below a temporary folder inside the repository, so that imports resolve
 * as a reader's do: packages from node_modules, the package's own exports by its name
 * (`gatehouse/client`, through package.json "exports"). Each block sits in a folder named like
 * its doc's, and `rootDirs` lays that tree over the repository's, so a folder README's relative
 * import (`./catalog/index.js` in workflows/README.md) reaches the file beside that README.
 */
export function compileSnippets(blocks: readonly CodeBlock[]): CompiledBlock[] {
  const tempRoot = path.join(
    REPO_ROOT,
    '.data',
    'tmp',
    `doc-snippets-${randomBytes(4).toString('hex')}`,
  );
  try {
    const files = new Map<string, CodeBlock>();
    for (const block of blocks) {
      const file = snippetPath(tempRoot, block);
      mkdirSync(path.dirname(file), { recursive: true });
      // `export {}` makes even a block without imports a module: its names stay its own, and
      // top-level await is allowed, as in the reader's ESM file. It follows the last line, so
      // the block's lines keep their numbers.
      writeFileSync(file, `${block.lines.join('\n')}\nexport {};\n`);
      files.set(path.resolve(file), block);
    }
    const program = ts.createProgram({
      rootNames: [...files.keys()],
      options: {
        ...repositoryOptions(),
        noEmit: true,
        rootDirs: [REPO_ROOT, tempRoot],
      },
    });
    const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
    if (global.length > 0) {
      throw new Error(
        `the snippets' program cannot be checked:\n${global
          .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
          .join('\n')}`,
      );
    }
    const results: CompiledBlock[] = [];
    for (const [file, block] of files) {
      const source = program.getSourceFile(file);
      if (!source) throw new Error(`the snippets' program lost ${file}`);
      const diagnostics = [
        ...program.getSyntacticDiagnostics(source),
        ...program.getSemanticDiagnostics(source),
      ];
      results.push({
        block,
        failures: diagnostics.map((diagnostic) => {
          const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
          const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
          return `${where(block.doc, block.firstLine + line)}: error TS${String(diagnostic.code)}: ${text}`;
        }),
      });
    }
    return results;
  } finally {
    rmSync(tempRoot, { recursive: true, force: true });
  }
}
