// What the CLI loads before it runs a command: the dataset writers of `convert` (src/convert/: Arrow,
// Parquet, Perfetto datasets) are imported by `convert` alone, so `summary`, `dump`, `cpu` and `spinlocks`
// do not pay for loading them (~20 ms of every run).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from 'vitest';

/** modules under dist/ that importing `module` (a dist/ file) loads, as logged by an ESM resolve hook */
function loadedBy(module: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'etw-cli-startup-'));
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `export async function resolve(s, c, next) {
       const r = await next(s, c);
       const at = r.url.lastIndexOf('/dist/');
       if (at >= 0) process.stderr.write('LOADED ' + r.url.slice(at + 6) + '\\n');
       return r;
     }\n`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const url = new URL(`../dist/${module}`, import.meta.url).href;
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', `await import(${JSON.stringify(url)})`], {
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice(7));
}

test('importing the CLI does not load the convert pipeline (src/convert/pool.ts and what it imports)', () => {
  const loaded = loadedBy('cli/main.js');
  expect(loaded).toContain('decode/files.js'); // the hook sees the CLI's imports
  expect(loaded.filter((m) => m.startsWith('convert/') && m !== 'convert/format-names.js')).toEqual([]);
});

// Each module costs ~2 ms to load (69 of them took 116–141 ms before a command ran): what only some
// commands or the parallel decode use loads with them.
test('importing the CLI loads neither the parallel decode nor the command-specific modules', () => {
  const loaded = loadedBy('cli/main.js');
  expect(loaded).toContain('parallel/run.js');
  const late = ['parallel/coordinator.js', 'parallel/partition.js', 'parallel/stitch.js', 'analysis/cpu.js', 'derive/cpu-usage.js', 'cli/cpu-text.js', 'output/text.js', 'analysis/spinlocks.js'];
  expect(loaded.filter((m) => late.includes(m))).toEqual([]);
  expect(new Set(loaded).size).toBeLessThanOrEqual(45);
});

test('the convert pipeline itself loads them (the check above can see them)', () => {
  expect(loadedBy('convert/pool.js')).toEqual(expect.arrayContaining(['convert/convert-file.js', 'convert/dataset.js']));
});
