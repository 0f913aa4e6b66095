// The two engines are twins file for file: every assembly/ module but layout.ts (copied to src/generated/) has
// its src/engine/reference/ twin, and a reference module imports only the twins of what its assembly/ module
// imports — so the reference engine's modules depend on each other as the WebAssembly engine's do, and have
// no import circle where those have none.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const ASSEMBLY = root + 'assembly/';
const REFERENCE = root + 'src/engine/reference/';

/** the .ts modules of a folder, without the extension */
function modules(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** the modules of the same folder that `module` imports or re-exports (type-only imports included) */
function siblingImports(dir: string, module: string): string[] {
  const text = readFileSync(`${dir}${module}.ts`, 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'\.\/([\w-]+)(?:\.js)?'/g)) out.add(m[1]!);
  return [...out].sort();
}

/** a cycle of `graph` as a list of modules, or null */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (m: string): string[] | null => {
    if (state.get(m) === 'done') return null;
    if (state.get(m) === 'open') return [...path.slice(path.indexOf(m)), m];
    state.set(m, 'open');
    path.push(m);
    for (const next of graph.get(m) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(m, 'done');
    return null;
  };
  for (const m of graph.keys()) {
    const cycle = visit(m);
    if (cycle) return cycle;
  }
  return null;
}

describe('engine twins', () => {
  const assembly = modules(ASSEMBLY).filter((m) => m !== 'layout');
  const reference = modules(REFERENCE);

  test('file for file', () => {
    expect(reference).toEqual(assembly);
  });

  test('a reference module imports only the twins of what its assembly/ module imports', () => {
    for (const m of reference) {
      const allowed = siblingImports(ASSEMBLY, m);
      for (const dep of siblingImports(REFERENCE, m)) expect(allowed, `src/engine/reference/${m}.ts imports ./${dep}`).toContain(dep);
    }
  });

  test('no import circle among the modules of either engine', () => {
    for (const [dir, list] of [
      [ASSEMBLY, assembly],
      [REFERENCE, reference],
    ] as const) {
      const graph = new Map(list.map((m) => [m, siblingImports(dir, m).filter((d) => d !== 'layout')]));
      expect(findCycle(graph), dir).toBeNull();
    }
  });
});
