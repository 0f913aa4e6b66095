// The command line never destroys its input and always stops when told to (issue 28, items 5, 6 and 8):
// an output that is the input (-o, a link to it, standard output appended to it, a conversion that would
// replace it) is refused; every command ends within a bound of SIGINT/SIGTERM/SIGHUP with 128 + the
// signal, whatever it waits on (a FIFO without writer or reader, a silent pipe, a decode); convert never
// opens a FIFO; the spool of a stream leaves nothing behind even on SIGKILL and obeys --max-spool; a
// closed standard output is an error. Runs the built CLI (`npm run build` first).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn, spawnSync, type StdioOptions } from 'node:child_process';
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateMixedTrace } from '../src/writer/index.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const linux = process.platform === 'linux';
const dir = mkdtempSync(join(tmpdir(), 'etw-safety-'));
/** TMPDIR of the spawned CLI: its spools must never be left there */
const spoolDir = join(dir, 'spool');
mkdirSync(spoolDir);
const trace = join(dir, 'trace.etl');
const big = join(dir, 'big.etl');
let bytes: Uint8Array;

beforeAll(() => {
  bytes = generateMixedTrace({ seed: 7, targetBytes: 200_000, cpus: 2, bufferSize: 0x4000 }).bytes;
  writeFileSync(trace, bytes);
  // long enough with the reference engine to be stopped halfway
  writeFileSync(big, generateMixedTrace({ seed: 8, targetBytes: 12_000_000, cpus: 2, bufferSize: 0x10000 }).bytes);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], stdio: StdioOptions = 'pipe', input?: Uint8Array): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', stdio, input, env: { ...process.env, TMPDIR: spoolDir }, timeout: 60_000 });
  const run = { status: r.status, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
  expect(run.stderr).not.toMatch(/\n\s+at |node:internal|Error: /); // never a stack trace
  return run;
}

const same = (path: string, expected: Uint8Array) => expect(Buffer.compare(readFileSync(path), expected)).toBe(0);

describe('an output that is the input is refused: exit 2, one line, the input untouched', () => {
  const copy = (name: string) => {
    const f = join(dir, name);
    writeFileSync(f, bytes);
    return f;
  };

  test('dump X -o X', () => {
    const f = copy('self.etl');
    const r = cli(['dump', f, '-o', f]);
    expect(r).toEqual({ status: 2, stdout: '', stderr: `etw-decode: -o ${f} is the input ${f}: writing it would destroy the trace; choose another output file\n` });
    same(f, bytes);
    expect(readdirSync(dir).filter((n) => n.startsWith('.self.etl'))).toEqual([]); // no temporary file either
  });

  test.skipIf(process.platform === 'win32')('through a symbolic link, a hard link, and a relative path', () => {
    const f = copy('linked.etl');
    symlinkSync('linked.etl', join(dir, 'sym.csv'));
    linkSync(f, join(dir, 'hard.csv'));
    for (const out of [join(dir, 'sym.csv'), join(dir, 'hard.csv')]) {
      const r = cli(['dump', f, '--table', 'spinlock', '-o', out]);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`etw-decode: -o ${out} is the input ${f}: writing it would destroy the trace; choose another output file\n`);
      same(f, bytes);
    }
    const r = spawnSync(process.execPath, [BIN, 'dump', 'linked.etl', '-o', './sym.csv'], { cwd: dir, encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([2, 'etw-decode: -o ./sym.csv is the input linked.etl: writing it would destroy the trace; choose another output file\n']);
    same(f, bytes);
  });

  test('standard input redirected from the file the output names (dump - -o X < X)', () => {
    const f = copy('stdin-self.etl');
    const fd = openSync(f, 'r');
    try {
      const r = cli(['dump', '-', '-o', f], [fd, 'pipe', 'pipe']);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`etw-decode: -o ${f} is the input standard input: writing it would destroy the trace; choose another output file\n`);
    } finally {
      closeSync(fd);
    }
    same(f, bytes);
  });

  test.each([['summary'], ['dump'], ['cpu'], ['spinlocks']])('%s X >> X: standard output appended to the input', (command) => {
    const f = copy(`append-${command}.etl`);
    const fd = openSync(f, 'a');
    try {
      const r = cli([command, f], ['ignore', fd, 'pipe']);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`etw-decode: standard output is the input ${f}: writing it would destroy the trace; redirect it to another file\n`);
    } finally {
      closeSync(fd);
    }
    same(f, bytes);
  });

  test('convert: an input inside the dataset is fine; one inside a partition the conversion replaces is refused (exit 1, the others converted)', () => {
    const out = join(dir, 'dataset');
    mkdirSync(out);
    const inside = join(out, 't.etl');
    writeFileSync(inside, bytes);
    const first = cli(['convert', inside, '--to', 'csv', '--out', out, '--no-progress']);
    expect(first.status).toBe(0);
    expect(first.stderr).toMatch(/1 converted, 0 skipped, 0 failed/);
    const id = readdirSync(join(out, 'traces'))[0]!.replace(/^trace=/, '');
    // the same trace, moved into its own cswitch partition, converted again (--force: every table rewritten)
    const partition = join(out, 'cswitch', `trace=${id}`);
    const moved = join(partition, 't.etl');
    renameSync(inside, moved);
    const other = copy('other.etl');
    writeFileSync(other, generateMixedTrace({ seed: 9, targetBytes: 100_000, cpus: 2, bufferSize: 0x4000 }).bytes);
    const r = cli(['convert', moved, other, '--to', 'csv', '--out', out, '--no-progress', '--threads', '1', '--force']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `etw-decode: ${moved}: failed: ${moved} is inside ${partition}, which converting it would replace: move the trace out of the dataset first\n`,
    );
    expect(r.stderr).toMatch(/1 converted, 0 skipped, 1 failed/);
    same(moved, bytes);
  });

  test.skipIf(process.platform === 'win32')('convert --to perfetto: an input that is (a link to) its own timeline file is refused', () => {
    const out = join(dir, 'timelines');
    const first = cli(['convert', trace, '--to', 'perfetto', '--out', out, '--no-progress']);
    expect(first.status).toBe(0);
    const timeline = readdirSync(out).find((n) => n.endsWith('.perfetto-trace'))!;
    // the trace itself where its timeline goes, reached through a link named like the trace
    const target = join(out, timeline);
    writeFileSync(target, bytes);
    const link = join(dir, 'timelines-link');
    mkdirSync(link);
    symlinkSync(target, join(link, 'trace.etl'));
    const r = cli(['convert', join(link, 'trace.etl'), '--to', 'perfetto', '--out', out, '--force', '--no-progress']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`failed: ${join(link, 'trace.etl')} is ${target}, which converting it would replace: move the trace out of the dataset first\n`);
    same(target, bytes);
  });
});

// ---- signals

/** Starts the CLI; `done` resolves with its exit status and signal, and when it closed. */
function start(args: string[], stdio: StdioOptions = ['ignore', 'pipe', 'pipe']) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio, env: { ...process.env, TMPDIR: spoolDir } });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout?.resume();
  let closedAt = 0;
  const done = new Promise<{ status: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.on('close', (status, signal) => {
      closedAt = performance.now();
      resolve({ status, signal, stderr });
    }),
  );
  return { child, done, closedAt: () => closedAt };
}

/**
 * True once the CLI's signal handlers are in: /proc/PID/status SigCgt has SIGHUP (Node itself catches
 * SIGINT and SIGTERM from its start, to restore the terminal before it dies of them).
 */
function catchesSignals(pid: number): boolean {
  try {
    const m = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m !== null && (BigInt('0x' + m[1]) & 1n) !== 0n;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (cond()) return true;
    await sleep(10);
  }
  return cond();
}

const SIGNALS = [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const;
/** generous for a loaded 2-core machine; the measured figures are printed at the end */
const BOUND_MS = 3000;
const figures: string[] = [];

/**
 * Starts `args`, waits until it is blocked where `settle` says (after its signal handlers are in), sends
 * `signal` and expects exit 128 + n within BOUND_MS, nothing on stderr; kills it if it does not end.
 */
async function stops(what: string, args: string[], signal: NodeJS.Signals, code: number, opts: { stdio?: StdioOptions; settle?: number } = {}) {
  const run = start(args, opts.stdio);
  await until(() => catchesSignals(run.child.pid!), 10_000);
  await sleep(opts.settle ?? 300); // into the wait (open, read, decode)
  const sent = performance.now();
  run.child.kill(signal);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 10_000);
  const r = await run.done;
  clearTimeout(timer);
  const ms = run.closedAt() - sent;
  figures.push(`${what.padEnd(44)} ${signal.padEnd(7)} exit ${r.status ?? r.signal} in ${ms.toFixed(0)} ms`);
  expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: code, signal: null, stderr: '' });
  expect(ms).toBeLessThan(BOUND_MS);
  expect(readdirSync(spoolDir)).toEqual([]);
}

afterAll(() => {
  if (figures.length) console.log('time from the signal to the exit:\n' + figures.join('\n'));
});

describe.skipIf(!linux)('every command ends promptly on SIGINT/SIGTERM/SIGHUP with 128 + the signal, whatever it waits on', () => {
  let fifo: string;
  let outFifo: string;
  beforeAll(() => {
    fifo = join(dir, 'in.fifo');
    outFifo = join(dir, 'out.fifo');
    expect(spawnSync('mkfifo', [fifo, outFifo]).status).toBe(0);
  });

  for (const command of ['summary', 'dump', 'cpu', 'spinlocks']) {
    test.each(SIGNALS)(`${command} FIFO without a writer: %s`, async (signal, code) => {
      await stops(`${command} on a FIFO without writer`, [command, fifo], signal, code);
    });
  }

  test.each(SIGNALS)('dump FIFO whose writer is silent: %s', async (signal, code) => {
    const run = stops('dump on a FIFO whose writer is silent', ['dump', fifo], signal, code, { settle: 600 });
    // a writer that opens the FIFO and writes nothing (O_RDWR: does not wait for the reader)
    await sleep(200);
    const w = openSync(fifo, 'r+');
    try {
      await run;
    } finally {
      closeSync(w);
    }
  });

  test.each(SIGNALS)('summary - on a silent pipe: %s', async (signal, code) => {
    await stops('summary - on a pipe without data', ['summary', '-'], signal, code, { stdio: ['pipe', 'pipe', 'pipe'] });
  });

  test.each(SIGNALS)('dump -o FIFO without a reader: %s', async (signal, code) => {
    await stops('dump -o FIFO without reader', ['dump', trace, '-o', outFifo], signal, code);
  });

  test.each(SIGNALS)('summary while decoding: %s', async (signal, code) => {
    await stops('summary decoding (reference engine)', ['summary', big, '--engine', 'reference', '--threads', '1'], signal, code, { settle: 100 });
  });

  test.each(SIGNALS)('convert while converting: %s', async (signal, code) => {
    await stops('convert converting', ['convert', big, '--out', join(dir, `stopped-${signal}`), '--engine', 'reference', '--no-progress'], signal, code, {
      settle: 400,
    });
  });
});

describe.skipIf(!linux)('convert never opens a FIFO', () => {
  test('convert good.etl fifo.etl: the FIFO is refused up front, the good file converted, exit 1', async () => {
    const fifo = join(dir, 'convert.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const out = join(dir, 'fifo-dataset');
    const run = start(['convert', trace, fifo, '--to', 'csv', '--out', out, '--no-progress']);
    const timer = setTimeout(() => run.child.kill('SIGKILL'), 20_000);
    const r = await run.done;
    clearTimeout(timer);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    // the refusal comes first: before any conversion started
    expect(lines[0]).toBe(`etw-decode: ${fifo}: failed: cannot read ${fifo}: it is a FIFO, not a regular file: convert reads trace files (save the stream to a file first)`);
    expect(lines.at(-1)).toMatch(/^etw-decode: 1 converted, 0 skipped, 1 failed/);
    expect(existsSync(join(out, 'traces'))).toBe(true);
  });
});

// ---- the spool of a stream

describe('the spool of a stream', () => {
  test.skipIf(!linux)('is unlinked as soon as it is opened: nothing is left behind on SIGKILL', async () => {
    const run = start(['summary', '-'], ['pipe', 'pipe', 'pipe']);
    run.child.stdin!.write(bytes.subarray(0, 50_000));
    /** the CLI holds its spool open, and the spool has no name any more */
    const spooling = () => {
      try {
        return readdirSync(`/proc/${run.child.pid}/fd`).some((fd) => {
          try {
            const target = readlinkSync(`/proc/${run.child.pid}/fd/${fd}`);
            return target.startsWith(spoolDir) && target.endsWith(' (deleted)');
          } catch {
            return false;
          }
        });
      } catch {
        return false;
      }
    };
    expect(await until(spooling, 10_000)).toBe(true);
    expect(readdirSync(spoolDir)).toEqual([]);
    run.child.kill('SIGKILL');
    await run.done;
    expect(readdirSync(spoolDir)).toEqual([]);
  });

  test('--max-spool: a stream larger than the limit is refused with one line, exit 1; under it, decoded', () => {
    const r = cli(['summary', '-', '--max-spool', '64K'], 'pipe', bytes);
    expect(r).toEqual({
      status: 1,
      stdout: '',
      stderr: 'etw-decode: standard input is larger than --max-spool 64 KiB (65536 bytes): a stream is copied to a temporary file before it is decoded; raise --max-spool or decode a file\n',
    });
    expect(readdirSync(spoolDir)).toEqual([]);
    const ok = cli(['summary', '-', '--max-spool', '1M', '--json'], 'pipe', bytes);
    expect([ok.status, ok.stderr]).toEqual([0, '']);
    expect(JSON.parse(ok.stdout).buffers).toBeGreaterThan(0);
    expect(cli(['summary', '-', '--max-spool', String(bytes.length)], 'pipe', bytes).status).toBe(0);
  });

  test.each([['0'], ['12Q'], ['-5'], ['1.5.2M']])('--max-spool %s is a usage error (exit 2)', (v) => {
    const r = cli(['summary', trace, '--max-spool', v]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^etw-decode: option '--max-spool <size>' argument '.*' is invalid\. expected a size in bytes/);
  });
});

describe.skipIf(!linux)('a closed standard output (>&-) is an error, not a silent loss', () => {
  test.each([['dump'], ['summary']])('%s FILE >&-: exit 1 with one line', (command) => {
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" ${command} "${trace}" >&-; echo "status $?" >&2`], { encoding: 'utf8' });
    expect(r.stderr).toBe('etw-decode: cannot write standard output: it is closed (>&-)\nstatus 1\n');
  });

  test('> /dev/null is fine', () => {
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" dump "${trace}" > /dev/null; echo "status $?" >&2`], { encoding: 'utf8' });
    expect(r.stderr).toBe('status 0\n');
  });
});
