// README.md as a user runs it: every ```ts/```js block type-checks under `strict` against the built package
// (dist/*.d.ts, imported as 'etw-decode' through the package's own `exports`), every ```sh line runs, a
// ```text block that starts with `$ command` is what the command prints, and the ```sql block runs in DuckDB
// over the dataset the README's `convert` line wrote. Failures name the README line.
//
// Where each ```sh line runs:
// - the CLI lines (`npx etw-decode …`, `cat … | …`): in a scratch directory holding samples/sample.etl and
//   node_modules/.bin/etw-decode → this checkout's bin/ (the built dist/, which `npm test` builds first);
// - the lines of a block that packs, builds or serves the checkout (`npm pack`, `npm run web`, …): in a copy
//   of this checkout (its files, node_modules linked) beside an empty project `my-app/`, so `npm pack` (with
//   its `prepare` build) and the install of its tarball run as written (dependencies from npm's cache), and
//   `npm run web` is started, asked for its page, and stopped. Two full builds (half a minute on an idle
//   2-core machine): with CI=true (as CI runs `npm test`) or ETW_DECODE_README_CHECKOUT=1, else skipped with
//   a line saying so;
// - elsewhere (ELSEWHERE below): `npm install && npm start` and `npm test` run in CI (.ci/run: `npm ci`,
//   `npm test`, `npm start`, checked here), the benchmarks (`npm run bench`, `npm run bench:e2e`) are not run
//   by tests (minutes of every core; `npm run typecheck` compiles bench/).
// Also: README.md is at most 400 lines; no dated or diary text in README.md, CONTRIBUTING.md, docs/ and
// bench/README.md; every relative link of them resolves (files and #anchors).
import { describe, expect, test } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { duck } from './helpers/readers.js';
import { analyzeCpu, decodeFile, resolveSelection } from '../src/node.js';
import { commandOf, fencedBlocks, runLine, startServer, userEnv, type Block } from './helpers/readme.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const BLOCKS = fencedBlocks(README);

/** README lines not run by this test, and where they run. */
const ELSEWHERE: Record<string, string> = {
  'npm install && npm start': 'CI: .ci/run runs `npm ci` (a clean `npm install`), then `npm start`',
  'npm test': 'CI: .ci/run runs `npm test`',
  'npm run bench': 'a benchmark: not run by tests; `npm run typecheck` compiles bench/',
  'npm run bench:e2e': 'a benchmark: not run by tests; `npm run typecheck` compiles bench/',
};

interface Line {
  at: number;
  text: string;
  cmd: string;
}
const linesOf = (b: Block): Line[] => b.lines.map((text, k) => ({ at: b.line + k, text, cmd: commandOf(text) })).filter((l) => l.cmd !== '');
/** a block that packs, builds or serves the checkout */
const inCheckout = (b: Block) => linesOf(b).some((l) => /^npm /.test(l.cmd) && !(l.cmd in ELSEWHERE));
const shellBlocks = BLOCKS.filter((b) => b.lang === 'sh');
/** whether the lines that pack, install and serve run (two full builds of a copy of the checkout) */
const CHECKOUT = process.env.CI === 'true' || process.env.ETW_DECODE_README_CHECKOUT === '1';
if (!CHECKOUT) console.log('README lines that pack, install and serve the checkout: skipped (two full builds); CI=true or ETW_DECODE_README_CHECKOUT=1 runs them');
const failed = (l: Line, r: { status: number | null; stdout: string; stderr: string }) =>
  `README.md:${l.at}: \`${l.cmd}\` exited ${r.status}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`;

describe('README.md', () => {
  test('for users: ≤ 400 lines, the two commands first, every block of a checked kind', () => {
    expect(README.replace(/\n$/, '').split('\n').length).toBeLessThanOrEqual(400);
    expect(linesOf(shellBlocks[0]!).map((l) => l.cmd)).toEqual(['npm install && npm start', 'npm test']);
    expect(BLOCKS[0]).toBe(shellBlocks[0]);
    for (const b of BLOCKS) expect(['sh', 'ts', 'js', 'text', 'sql'], `README.md:${b.line - 1}: a \`\`\`${b.lang} block is not checked`).toContain(b.lang);
  });

  test('no dated or diary text in README.md, CONTRIBUTING.md, docs/ and bench/README.md; relative links resolve', () => {
    const files = ['README.md', 'CONTRIBUTING.md', 'bench/README.md', ...markdownUnder('docs')];
    const diary = /\b(morning|afternoon|evening|yesterday|today|tonight)\b|\bI (tried|measured|found|think)\b|\b20\d\d-\d\d-\d\d\b/i;
    const problems: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      text.split('\n').forEach((line, i) => {
        const m = diary.exec(line);
        if (m) problems.push(`${f}:${i + 1}: "${m[0]}" in: ${line.trim()}`);
        for (const link of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = link[1]!;
          if (/^[a-z]+:/i.test(target)) continue;
          const [path, anchor] = target.split('#') as [string, string | undefined];
          const file = path ? join(dirname(join(ROOT, f)), path) : join(ROOT, f);
          if (!existsSync(file)) problems.push(`${f}:${i + 1}: link to a missing file: ${target}`);
          else if (anchor && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) problems.push(`${f}:${i + 1}: no heading for #${anchor} in ${relative(ROOT, file)}`);
        }
      });
    }
    expect(problems).toEqual([]);
  });

  test('every TypeScript example compiles under strict against the built package (dist/*.d.ts), and the Node ones run', async () => {
    expect(existsSync(join(ROOT, 'dist', 'node.d.ts')), 'dist/ is missing: run `npm run build`').toBe(true);
    // inside the package (tmp/ is git-ignored and outside tsconfig.json), so 'etw-decode' resolves through its own exports
    const dir = join(ROOT, 'tmp', 'readme-examples');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const examples = BLOCKS.filter((b) => b.lang === 'ts' || b.lang === 'js');
    expect(examples.length).toBeGreaterThanOrEqual(4);
    const files = examples.map((b) => {
      const name = `line-${b.line}.ts`;
      writeFileSync(join(dir, name), b.lines.join('\n') + '\nexport {};\n');
      return name;
    });
    const compilerOptions = {
      strict: true,
      noEmitOnError: true,
      outDir: 'js',
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      moduleDetection: 'force',
      lib: ['es2022', 'dom'],
      types: ['node'],
      skipLibCheck: true,
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }, null, 2));
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    // line-<L>.ts(row,col): error … → README.md:<L + row − 1>
    const errors = (r.stdout + r.stderr)
      .split('\n')
      .filter((s) => s.trim() !== '')
      .map((s) => s.replace(/^(?:.*\/)?line-(\d+)\.ts\((\d+),(\d+)\)/, (_, l: string, row: string, col: string) => `README.md:${Number(l) + Number(row) - 1}:${col}`));
    expect(errors).toEqual([]);
    expect(r.status).toBe(0);
    // the Node examples run, from a directory holding the sample (the browser ones, which use `document`, only compile)
    const cwd = sampleDir();
    for (const b of examples.filter((b) => !b.lines.some((l) => /\bdocument\./.test(l)))) {
      const l = { at: b.line, text: '', cmd: `node line-${b.line}.js` };
      const run = await runLine(`node '${join(dir, 'js', `line-${b.line}.js`)}' > /dev/null`, cwd, userEnv(), 60_000, cwd);
      expect(run.status, failed(l, run)).toBe(0);
    }
    rmSync(cwd, { recursive: true, force: true });
  }, 120_000);

  test('every CLI line runs from a directory holding the sample; `$` outputs and the SQL query are current', async () => {
    const dir = sampleDir();
    const env = userEnv();
    let ran = 0;
    for (const b of shellBlocks.filter((b) => !inCheckout(b))) {
      let cwd = dir;
      for (const l of linesOf(b)) {
        if (l.cmd in ELSEWHERE) continue;
        const r = await runLine(l.text, cwd, env, 60_000, dir);
        expect(r.status, failed(l, r)).toBe(0);
        cwd = r.cwd;
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(10);
    // ```text blocks that show a command's output
    for (const b of BLOCKS.filter((b) => b.lang === 'text' && b.lines[0]?.startsWith('$ '))) {
      const l = { at: b.line, text: b.lines[0]!.slice(2), cmd: commandOf(b.lines[0]!.slice(2)) };
      const r = await runLine(l.cmd, dir, env, 60_000, dir);
      expect(r.status, failed(l, r)).toBe(0);
      expect(r.stdout.trimEnd(), `README.md:${b.line}: the output of \`${l.cmd}\``).toBe(b.lines.slice(1).join('\n').trimEnd());
    }
    // the DuckDB queries, over the dataset `convert` wrote: the library's answers for the sample
    const sql = BLOCKS.filter((b) => b.lang === 'sql');
    expect(sql).toHaveLength(2);
    expect(existsSync(join(dir, 'dataset', 'traces')), 'the README converts the sample into dataset/ before its query').toBe(true);
    const c = await duck();
    const run = async (b: (typeof sql)[number]) => (await c.runAndReadAll(b.lines.join('\n').replaceAll("'dataset/", `'${dir}/dataset/`))).getRowObjects();
    const r = await decodeFile(join(dir, 'samples', 'sample.etl'));
    const inRange = analyzeCpu(r, { selection: resolveSelection({ from: '0.2s', to: '0.4s' }, r.clock, r) });
    const top = await run(sql[0]!);
    expect(top.length).toBeGreaterThan(2);
    expect(top.slice(0, 3).map((x) => [x.imageFileName, x.pid])).toEqual(inRange.processes.slice(0, 3).map((p) => [p.imageFileName, p.processId]));
    expect(Math.abs(Number(top[0]!.cpuMs) - inRange.processes[0]!.cpuMs!)).toBeLessThan(0.01);
    const delays = await run(sql[1]!);
    const worst = analyzeCpu(r, { worst: 3 }).worst;
    expect(delays.slice(0, 3).map((x) => [x.newThreadId, x.cpu, x.readyingThreadId])).toEqual(worst.map((w) => [w.threadId, w.cpu, w.readyingThreadId]));
    expect(Math.abs(Number(delays[0]!.readyMs) - worst[0]!.readyMs!)).toBeLessThan(0.001);
    // a timestamp DuckDB understands: the switch-in as UTC
    expect(String(delays[0]!.switchInTimeUtc)).toMatch(/^2022-06-18 04:26:40\.\d+/);
    rmSync(dir, { recursive: true, force: true });
  }, 180_000);

  test.runIf(CHECKOUT)('the lines that pack, install, build and serve run in a copy of the checkout', async () => {
    const blocks = shellBlocks.filter(inCheckout);
    expect(blocks.map((b) => linesOf(b).map((l) => l.cmd.split(' ').slice(0, 3).join(' ')))).toContainEqual(expect.arrayContaining(['npm pack']));
    const base = mkdtempSync(join(tmpdir(), 'etw-readme-checkout-'));
    const checkout = join(base, 'etw-decode');
    const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    for (const f of tracked) {
      if (!existsSync(join(ROOT, f))) continue; // deleted, not yet committed
      mkdirSync(dirname(join(checkout, f)), { recursive: true });
      copyFileSync(join(ROOT, f), join(checkout, f));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
    mkdirSync(join(base, 'my-app'));
    writeFileSync(join(base, 'my-app', 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module' }));
    // dependencies come from npm's cache (`npm ci` filled it); PORT=0: a free port for `npm run web`
    const env = userEnv({ npm_config_prefer_offline: 'true', PORT: '0' });
    try {
      for (const b of blocks) {
        let cwd = checkout;
        for (const l of linesOf(b)) {
          if (l.cmd in ELSEWHERE) continue;
          if (l.cmd === 'npm run web') {
            const served = await startServer(l.cmd, cwd, env, 240_000);
            try {
              const page = await fetch(served.url);
              expect(page.status, served.output).toBe(200);
              expect(await page.text()).toContain('<html');
              expect((await fetch(new URL('app.js', served.url))).status).toBe(200);
            } finally {
              await served.stop();
            }
            continue;
          }
          const r = await runLine(l.text, cwd, env, 240_000, base);
          expect(r.status, failed(l, r)).toBe(0);
          if (/^node .*decodeFile/.test(l.cmd)) expect(r.stdout.trim()).toMatch(/^\d+$/);
          cwd = r.cwd;
        }
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }, 600_000);

  test('the lines run elsewhere are run there: CI runs npm ci, npm test and npm start; the bench scripts exist', () => {
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8').split('\n').map((s) => s.trim());
    for (const cmd of ['npm ci', 'npm start']) expect(ci.some((s) => s.startsWith(cmd))).toBe(true);
    expect(ci.some((s) => /^npm test\b/.test(s))).toBe(true);
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    expect(scripts.bench).toContain('bench/run.js');
    expect(scripts['bench:e2e']).toContain('bench/e2e.js');
    const mentioned = shellBlocks.flatMap(linesOf).map((l) => l.cmd).filter((c) => c in ELSEWHERE);
    expect(mentioned.sort()).toEqual(Object.keys(ELSEWHERE).sort());
  });
});

/** A scratch directory as a user's: samples/sample.etl, and node_modules/.bin/etw-decode → this checkout's bin/. */
function sampleDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'etw-readme-'));
  mkdirSync(join(dir, 'samples'));
  copyFileSync(join(ROOT, 'samples', 'sample.etl'), join(dir, 'samples', 'sample.etl'));
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(join(ROOT, 'bin', 'etw-decode.js'), join(dir, 'node_modules', '.bin', 'etw-decode'));
  return dir;
}

/** Markdown files under `dir` of the repository (relative paths). */
function markdownUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...markdownUnder(p));
    else if (e.name.endsWith('.md')) out.push(p);
  }
  return out;
}

/** The #anchors of a Markdown file's headings, as GitHub makes them. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    const slug = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}
