// No import circles in src/: a module's imports never lead back to it. Runtime imports (`import … from`,
// `export … from`, not `import type`) are checked over all of src/; type imports too wherever a circle
// would touch the entries, the decode API, the parallel decode or the CLI.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The import graph of src/ (paths relative to it); `types`: `import type` and `export type` count too. */
function importGraph(types: boolean): Map<string, string[]> {
  const files = sourceFiles();
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps: string[] = [];
    for (const m of readFileSync(f, 'utf8').matchAll(/^\s*(?:import|export)\s+(type\s+)?[^'";]*?from\s+'(\.[^']+)'/gm)) {
      if (m[1] && !types) continue;
      const to = resolve(dirname(f), m[2]!.replace(/\.js$/, '.ts'));
      if (known.has(to)) deps.push(relative(SRC, to).replaceAll('\\', '/'));
    }
    graph.set(relative(SRC, f).replaceAll('\\', '/'), deps);
  }
  return graph;
}

/** The circles: strongly connected sets of more than one module, or a module importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1 || graph.get(v)!.includes(v)) out.push(set.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

test('the check sees a circle', () => {
  const g = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  expect(circles(g)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  expect(importGraph(false).get('cli/main.ts')).toContain('cli/io.ts');
});

test('no runtime import circle in src/', () => {
  expect(circles(importGraph(false))).toEqual([]);
});

test('no import circle (type imports included) through the entries, decode/, parallel/ or cli/', () => {
  const mine = (f: string) => ['index.ts', 'node.ts'].includes(f) || /^(decode|parallel|cli)\//.test(f);
  expect(circles(importGraph(true)).filter((c) => c.some(mine))).toEqual([]);
});
