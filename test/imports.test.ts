// The shape of src/: no import circles, few files at the top, registries wired in the entry points only.
// Every src/**/*.ts is parsed (the TypeScript parser, so comments and strings never count): its static
// `import … from` and `export … from`, its `import('…')` calls and `typeof import('…')` types are the edges. `import type` counts
// too: a type-only circle still means two modules that each need the other to be understood, and the layers
// (input → framing → engine → tables → result → derive/analysis → output → cli) read one way only.
import { describe, expect, test } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
const rel = (p: string): string => relative(ROOT, p).split('\\').join('/');

/** Every .ts file under `dir`, sorted. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The module specifiers a file imports: static imports and re-exports (type-only too), import() calls and import() types. */
function specifiers(sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const literal = (n: ts.Node | undefined): void => {
    if (n && ts.isStringLiteralLike(n)) out.push(n.text);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) literal(n.moduleSpecifier);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) literal(n.arguments[0]);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) literal(n.argument.literal);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The file a relative specifier names (`./x.js` is `./x.ts`), or null when none is there. */
function resolveRelative(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => c.endsWith('.ts') && existsSync(c)) ?? null;
}

/** The import graph of src/: file → the src files it imports. Throws on a relative import that names no file. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(SRC)) {
    const to = new Set<string>();
    for (const spec of specifiers(parse(file))) {
      if (!spec.startsWith('.')) continue; // packages and node: builtins
      const target = resolveRelative(file, spec);
      if (target === null) throw new Error(`${rel(file)}: import '${spec}' names no file`);
      if (target.startsWith(SRC)) to.add(target);
    }
    graph.set(file, [...to].sort());
  }
  return graph;
}

/** Strongly connected components with a circle in them (Tarjan): each two or more files, or one that imports itself. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const strong = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) strong(v);
  return out.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** One shortest circle through the first file of a component, as `a → b → a`. */
function oneCircle(graph: Map<string, string[]>, scc: string[], name: (f: string) => string): string {
  const inside = new Set(scc);
  const start = scc[0]!;
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const w of graph.get(queue[i]!) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let v = queue[i]!; v !== start; v = from.get(v)!) path.splice(1, 0, v);
        return [...path, start].map(name).join(' → ');
      }
      if (!from.has(w)) {
        from.set(w, queue[i]!);
        queue.push(w);
      }
    }
  }
  return scc.map(name).join(', ');
}

function circleReport(graph: Map<string, string[]>, name: (f: string) => string): string[] {
  return circles(graph).map((scc) => `${scc.map(name).join(' ↔ ')}   (for example ${oneCircle(graph, scc, name)})`);
}

describe('import circles', () => {
  test('the checker finds circles (a self-check on a made-up graph)', () => {
    const g = new Map<string, string[]>([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
      ['f', ['a']],
    ]);
    expect(circles(g)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(circleReport(g, (f) => f)).toEqual(['a ↔ b ↔ c   (for example a → b → c → a)', 'e   (for example e → e)']);
    expect(circles(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
  });

  test('the parser sees every kind of import, and nothing in comments or strings', () => {
    const sf = ts.createSourceFile(
      'x.ts',
      [
        "import a from './a.js';",
        "import type { B } from './b.js';",
        "export { c } from './c.js';",
        "export * from './d.js';",
        "import './e.js';",
        "const f = await import('./f.js');",
        "let g: typeof import('./g.js');",
        "// import h from './h.js';",
        "const s = \"import i from './i.js'\";",
      ].join('\n'),
      ts.ScriptTarget.Latest,
      true,
      ts.ScriptKind.TS,
    );
    expect(specifiers(sf)).toEqual(['./a.js', './b.js', './c.js', './d.js', './e.js', './f.js', './g.js']);
  });

  test('src/ has none (every circle is listed)', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(circleReport(graph, rel)).toEqual([]);
  });
});

describe('the layout of src/', () => {
  test('at most 8 .ts files at the top of src/ (the entry points and the foundation; the rest in stage folders)', () => {
    const top = readdirSync(SRC).filter((f) => f.endsWith('.ts') && statSync(join(SRC, f)).isFile());
    expect(top.length, `src/*.ts: ${top.join(', ')}`).toBeLessThanOrEqual(8);
  });

  /** The modules a program or a bundle starts from: the package's entries (package.json exports), the CLI, the workers. */
  function entryPoints(): Set<string> {
    const entries = new Set(['src/index.ts', 'src/node.ts', 'src/cli/main.ts', 'src/convert/worker.ts']);
    for (const f of readdirSync(join(SRC, 'parallel'))) if (/^worker-.*\.ts$/.test(f)) entries.add(`src/parallel/${f}`);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const dists = JSON.stringify(pkg.exports).match(/\.\/dist\/[^"]+\.js/g) ?? [];
    for (const d of dists) entries.add(d.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
    return entries;
  }

  /** Calls of a `register…(` function in a file's top-level statements (not inside a function, method or class). */
  function topLevelRegisterCalls(sf: ts.SourceFile): string[] {
    const calls: string[] = [];
    const visit = (n: ts.Node): void => {
      if (ts.isFunctionLike(n) || ts.isClassLike(n)) return; // runs when called, not on import
      if (ts.isCallExpression(n)) {
        const callee = ts.isPropertyAccessExpression(n.expression) ? n.expression.name : n.expression;
        if (ts.isIdentifier(callee) && /^register[A-Z]/.test(callee.text)) {
          calls.push(`${callee.text}(…) at line ${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`);
        }
      }
      ts.forEachChild(n, visit);
    };
    for (const s of sf.statements) visit(s);
    return calls;
  }

  test('the register…(…) check sees top-level calls only', () => {
    const sf = ts.createSourceFile(
      'x.ts',
      [
        'registerA(1);',
        'if (x) registerB(2);',
        'export function registerC() { registerD(); }',
        'const e = () => registerE();',
        'class F { m() { registerF(); } }',
        'lib.registerG(3);',
        '// registerH();',
      ].join('\n'),
      ts.ScriptTarget.Latest,
      true,
      ts.ScriptKind.TS,
    );
    expect(topLevelRegisterCalls(sf)).toEqual(['registerA(…) at line 1', 'registerB(…) at line 2', 'registerG(…) at line 6']);
  });

  test('registries are wired in the entry points only: no other module calls register…(…) when imported', () => {
    const entries = entryPoints();
    const found: string[] = [];
    for (const file of tsFiles(SRC)) {
      if (entries.has(rel(file))) continue;
      for (const call of topLevelRegisterCalls(parse(file))) found.push(`${rel(file)}: ${call}`);
    }
    expect(found).toEqual([]);
  });
});
