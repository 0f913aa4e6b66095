// The CLI's options are declared once (src/cli/options.ts, each with its parser and help text), and the
// commands, one file each, pick them: no other CLI module declares an option, and main.ts runs no command.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const CLI = fileURLToPath(new URL('../src/cli/', import.meta.url));
const text = (f: string) => readFileSync(CLI + f, 'utf8');

test('options are declared in options.ts only, each flag once', () => {
  const declares = /new Option\(|\.(option|requiredOption)\(/;
  for (const f of readdirSync(CLI).filter((f) => f.endsWith('.ts') && f !== 'options.ts')) expect(text(f), f).not.toMatch(declares);
  const flags = [...text('options.ts').matchAll(/new Option\(`?'?(?:-\w, )?(--[\w-]+)/g)].map((m) => m[1]);
  expect(flags.length).toBeGreaterThan(15);
  expect(flags.filter((f, i) => flags.indexOf(f) !== i)).toEqual([]);
});

test('one file per command; main.ts only builds the program and dispatches', () => {
  for (const c of ['summary', 'cpu', 'dump', 'spinlocks', 'convert']) expect(text(`${c}.ts`), c).toMatch(new RegExp(`\\.command\\('${c}'\\)`));
  expect(text('main.ts')).not.toMatch(/\.command\(|\.action\(/);
});
