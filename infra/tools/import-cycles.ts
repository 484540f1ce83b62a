// Finds import cycles among the project's own TypeScript files, so the layers keep pointing down
// (workflows ← activities ← api, worker). Every static `import` and `export … from`
// counts, `import type` included: a type-only cycle loads fine but still ties two layers together.
// Dynamic `import()` does not count: it is how a module loads another lazily, at run time.
import ts from 'typescript';
import { relative } from 'node:path';

export type ImportGraph = Map<string, string[]>;

/** The project's files as tsconfig.json lists them, each with the project files it imports. */
export function projectImportGraph(root: string): ImportGraph {
  const configPath = ts.findConfigFile(root, (path) => ts.sys.fileExists(path));
  if (!configPath) throw new Error(`no tsconfig.json in ${root}`);
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(read.config as object, ts.sys, root);
  const files = new Set(parsed.fileNames);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const text = ts.sys.readFile(file) ?? '';
    const imported = staticSpecifiers(file, text)
      .map((specifier) => {
        const { resolvedModule } = ts.resolveModuleName(specifier, file, parsed.options, ts.sys);
        return resolvedModule?.resolvedFileName;
      })
      .filter((resolved): resolved is string => resolved !== undefined && files.has(resolved));
    graph.set(
      relative(root, file),
      [...new Set(imported)].map((path) => relative(root, path)),
    );
  }
  return graph;
}

function staticSpecifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)
        ? statement.moduleSpecifier
        : undefined;
    if (specifier && ts.isStringLiteral(specifier)) specifiers.push(specifier.text);
  }
  return specifiers;
}

/**
 * One cycle per strongly connected component of the graph (Tarjan's algorithm), each written as
 * the path that walks it: `[a, b, a]`. An empty list means the imports form a DAG.
 */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];

  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component = new Set<string>();
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.add(member);
      if (member === node) break;
    }
    const selfImport = graph.get(node)?.includes(node) ?? false;
    if (component.size > 1 || selfImport) cycles.push(cycleThrough(graph, node, component));
  };

  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** The shortest walk from `start` back to itself inside one component (breadth first). */
function cycleThrough(graph: ImportGraph, start: string, component: Set<string>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] ?? start;
    for (const next of graph.get(node) ?? []) {
      if (!component.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start;) {
          path.splice(1, 0, at);
          at = cameFrom.get(at);
        }
        return [...path, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}
