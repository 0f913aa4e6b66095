// The command line on paths and pipes (issue 13): a closed stdout, unwritable outputs, FIFOs and stdin,
// nothing on stdout before the input is known good, exit codes, and one stderr line when data was lost or
// a table is empty. Every case asserts the exact exit code and the exact stderr; none may print a stack.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COUNTERS, decodeSync, streamFile, TABLE_NAMES, type TraceSummary } from '../src/node.js';
import { TABLES } from '../src/generated/registry.js';
import { groupMasks } from '../src/result/logfile.js';
import { emptyTableText } from '../src/output/summary-text.js';
import { DATA_LOSS_PHRASES, dataLossText } from '../src/result/diagnostics.js';
import { generateMixedTrace, writeTrace, Rng, type EventSpec } from '../src/writer/index.js';
import { cswitches } from './helpers/traces.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-pipes-'));
/** TMPDIR of the spawned CLI: its spools must be gone when it ends */
const spoolDir = join(dir, 'spool');
mkdirSync(spoolDir);
const posix = process.platform !== 'win32';

const trace = join(dir, 'mixed.etl');
const big = join(dir, 'big.etl');
let bytes: Uint8Array;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], options: SpawnSyncOptions = {}): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, TMPDIR: spoolDir }, ...options });
  const run = { status: r.status, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
  expect(run.stderr).not.toMatch(/\n\s+at |node:internal|Error: /); // never a stack trace
  return run;
}

/** Starts the CLI; resolves with its exit code and stderr. */
function start(args: string[], stdio: ('pipe' | 'ignore' | number)[] = ['pipe', 'pipe', 'pipe']) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio, env: { ...process.env, TMPDIR: spoolDir } });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ status: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.on('close', (status, signal) => resolve({ status, signal, stderr })),
  );
  return { child, done };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}


beforeAll(() => {
  bytes = generateMixedTrace({ seed: 3, targetBytes: 200_000, cpus: 2, bufferSize: 0x4000 }).bytes;
  writeFileSync(trace, bytes);
  // ~4 MB of CSV: far more than a pipe buffer holds, and long enough to be stopped halfway
  writeFileSync(big, generateMixedTrace({ seed: 4, targetBytes: 3_000_000, cpus: 2, bufferSize: 0x10000 }).bytes);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spoolsLeft = () => readdirSync(spoolDir);
/** The CLI holds a file of the spool directory open (on Linux the spool is unlinked as soon as it is opened). */
const holdsSpool = (pid: number): boolean => {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(spoolDir);
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
};
const entries = (d: string) => readdirSync(d).sort();

describe('a closed standard output ends the command quietly with 141 (128 + SIGPIPE, as `cat file | head`)', () => {
  test('the reader closes the pipe after the first chunk', async () => {
    const { child, done } = start(['dump', big]);
    child.stdout!.once('data', () => child.stdout!.destroy());
    expect(await done).toEqual({ status: 141, signal: null, stderr: '' });
  });

  test.skipIf(!posix)('dump FILE | head -n 1', () => {
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" dump "${big}" 2>"${dir}/head.err" | head -n 1; echo "\${PIPESTATUS[0]}"`], { encoding: 'utf8' });
    const [header, status] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^timestamp,cpu,/);
    expect(status).toBe('141');
    expect(readFileSync(join(dir, 'head.err'), 'utf8')).toBe('');
  });

  test('summary into a pipe closed before it writes', async () => {
    const { child, done } = start(['summary', big]);
    child.stdout!.destroy();
    const r = await done;
    expect(r.stderr).toBe('');
    expect(r.status).toBe(141);
  });
});

describe('-o: one line when the target cannot be written, exit 1, never a partial file under its name', () => {
  test('a directory', () => {
    const target = join(dir, 'outdir');
    mkdirSync(target);
    const r = cli(['dump', trace, '-o', target]);
    expect(r).toEqual({ status: 1, stdout: '', stderr: `etw-decode: cannot write ${target}: it is a directory\n` });
    expect(entries(target)).toEqual([]);
  });

  test('a missing directory', () => {
    const r = cli(['dump', trace, '-o', '/missing/dir/x.csv']);
    expect(r).toEqual({ status: 1, stdout: '', stderr: 'etw-decode: cannot write /missing/dir/x.csv: no such directory: /missing/dir\n' });
  });

  test.skipIf(!existsSync('/dev/full'))('a full device (/dev/full)', () => {
    const r = cli(['dump', trace, '-o', '/dev/full']);
    expect(r).toEqual({ status: 1, stdout: '', stderr: 'etw-decode: cannot write /dev/full: no space left on device\n' });
  });

  test.skipIf(!existsSync('/dev/full'))('standard output on a full device (> /dev/full)', () => {
    const fd = openSync('/dev/full', 'w');
    try {
      const r = cli(['dump', trace], { stdio: ['ignore', fd, 'pipe'] });
      expect(r.status).toBe(1);
      expect(r.stderr).toBe('etw-decode: cannot write standard output: no space left on device\n');
    } finally {
      closeSync(fd);
    }
  });

  test.skipIf(!posix || process.getuid?.() === 0)('a directory without write permission', () => {
    const ro = join(dir, 'readonly');
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    const r = cli(['dump', trace, '-o', join(ro, 'x.csv')]);
    expect(r).toEqual({ status: 1, stdout: '', stderr: `etw-decode: cannot write ${join(ro, 'x.csv')}: permission denied\n` });
  });

  test('success: the complete file under its name, its permissions kept, no temporary file left', () => {
    const d = join(dir, 'ok');
    mkdirSync(d);
    const target = join(d, 'cs.csv');
    writeFileSync(target, 'old\n');
    chmodSync(target, 0o640);
    const r = cli(['dump', trace, '-o', target]);
    expect(r).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(readFileSync(target, 'utf8')).toBe(cli(['dump', trace]).stdout);
    if (posix) expect(statSync(target).mode & 0o777).toBe(0o640);
    expect(entries(d)).toEqual(['cs.csv']);
  });

  test.skipIf(!posix)('a symbolic link: the file it points to is replaced, the link stays', () => {
    const d = join(dir, 'link');
    mkdirSync(d);
    writeFileSync(join(d, 'real.csv'), 'old\n');
    symlinkSync('real.csv', join(d, 'link.csv'));
    expect(cli(['dump', trace, '--table', 'spinlock', '-o', join(d, 'link.csv')]).status).toBe(0);
    expect(readFileSync(join(d, 'real.csv'), 'utf8')).toMatch(/^timestamp,cpu,spinLockAddress/);
    expect(entries(d)).toEqual(['link.csv', 'real.csv']);
  });

  test('a bad input leaves an existing target as it was and creates nothing', () => {
    const d = join(dir, 'keep');
    mkdirSync(d);
    const target = join(d, 'cs.csv');
    writeFileSync(target, 'keep\n');
    const notEtl = join(dir, 'text.etl');
    writeFileSync(notEtl, 'definitely not a trace'.repeat(20));
    const r = cli(['dump', notEtl, '-o', target]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^etw-decode: not an ETL file: at offset 0x0 expected .*\n$/);
    expect(readFileSync(target, 'utf8')).toBe('keep\n');
    expect(entries(d)).toEqual(['cs.csv']);
  });

  test.skipIf(!posix)('stopped by SIGTERM halfway: exit 143, the temporary file removed, no target', async () => {
    const d = join(dir, 'term');
    mkdirSync(d);
    const { child, done } = start(['dump', big, '--engine', 'reference', '-o', join(d, 'cs.csv')]);
    await until(() => readdirSync(d).some((f) => f.endsWith('.tmp')), 'the temporary file');
    child.kill('SIGTERM');
    expect(await done).toEqual({ status: 143, signal: null, stderr: '' });
    expect(entries(d)).toEqual([]);
  });
});

describe('pipes as input: stdin (-) and FIFOs are read as a stream, spooled to a temporary file', () => {
  test('summary - reads standard input', () => {
    const r = cli(['summary', '-', '--json'], { input: bytes });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    const lib = decodeSync(bytes);
    expect(out.file).toBe('-');
    expect([out.buffers, out.events, out.cswitch, out.spinlock]).toEqual([lib.summary.buffers, lib.summary.events, lib.cswitch.length, lib.spinlock.length]);
    expect(spoolsLeft()).toEqual([]);
  });

  test('summary - in text names standard input', () => {
    const r = cli(['summary', '-'], { input: bytes });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^standard input: 196608 bytes, /);
  });

  test('dump - writes what dump FILE writes', () => {
    const r = cli(['dump', '-', '--names', '--time', 'ns'], { input: bytes });
    expect(r).toEqual({ status: 0, stdout: cli(['dump', trace, '--names', '--time', 'ns']).stdout, stderr: '' });
    expect(spoolsLeft()).toEqual([]);
  });

  test('not an ETL file on stdin: the same line as for a file, exit 1', () => {
    const text = Buffer.from('definitely not a trace'.repeat(20));
    const f = join(dir, 'text2.etl');
    writeFileSync(f, text);
    const r = cli(['dump', '-'], { input: text });
    expect(r).toEqual({ status: 1, stdout: '', stderr: cli(['dump', f]).stderr });
    expect(r.stderr).toBe(
      'etw-decode: not an ETL file: at offset 0x0 expected a WMI_BUFFER_HEADER whose BufferSize is between 0x48 and 0x1B8, found BufferSize 0x69666564' +
        ' — the file starts with text: is it an ETL trace (.etl) written by WPR, xperf or an ETW session?\n',
    );
    expect(spoolsLeft()).toEqual([]);
  });

  test.skipIf(process.platform !== 'linux' || !existsSync('/usr/bin/script'))('- on a terminal is refused at once, exit 2', () => {
    // util-linux script(1) gives the command a pseudo-terminal
    const r = spawnSync('script', ['-qec', `"${process.execPath}" "${BIN}" summary -; echo "status $?"`, '/dev/null'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(r.stdout.replace(/\r/g, '')).toBe(
      'etw-decode: standard input is a terminal: pipe a trace into it (… | etw-decode summary -) or name a file\nstatus 2\n',
    );
  });

  test('empty stdin', () => {
    const r = cli(['summary', '-'], { input: '' });
    expect(r).toEqual({ status: 1, stdout: '', stderr: 'etw-decode: input is empty (0 bytes): expected an ETL file\n' });
  });

  test('a stream that is not ETL fails once its first 64 MiB (the largest buffer) are in, not at its end', async () => {
    const { child, done } = start(['summary', '-']);
    child.stdin!.on('error', () => {}); // EPIPE once the CLI stops reading
    const zeros = Buffer.alloc(1 << 20);
    let written = 0;
    const pump = () => {
      while (written < 1024 && child.stdin!.writable && child.stdin!.write(zeros)) written++;
    };
    child.stdin!.on('drain', pump);
    pump();
    const r = await done;
    expect(written).toBeLessThan(1024);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'etw-decode: not an ETL file: at offset 0x0 expected a WMI_BUFFER_HEADER whose BufferSize is between 0x48 and 0x4000000, found BufferSize 0x0 — is it an ETL trace (.etl) written by WPR, xperf or an ETW session?\n',
    );
    expect(spoolsLeft()).toEqual([]);
  });

  test.skipIf(!posix)('stopped by SIGTERM while spooling: exit 143, the spool removed', async () => {
    const { child, done } = start(['summary', '-']);
    child.stdin!.write(bytes.subarray(0, 50_000));
    await until(() => spoolsLeft().length > 0 || holdsSpool(child.pid!), 'the spool');
    child.kill('SIGTERM');
    expect(await done).toEqual({ status: 143, signal: null, stderr: '' });
    expect(spoolsLeft()).toEqual([]);
  });

  test.skipIf(!posix)('a FIFO (mkfifo): summary and dump read it as a stream', async () => {
    const fifo = join(dir, 'trace.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const run = async (args: string[]) => {
      const { child, done } = start(args, ['ignore', 'pipe', 'pipe']);
      let stdout = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      await writeFile(fifo, bytes); // opening the FIFO for writing waits for the CLI to open it for reading
      return { ...(await done), stdout };
    };
    const s = await run(['summary', fifo, '--json']);
    expect([s.status, s.stderr]).toEqual([0, '']);
    expect(JSON.parse(s.stdout).cswitch).toBe(decodeSync(bytes).cswitch.length);
    const d = await run(['dump', fifo, '--table', 'spinlock', '--format', 'jsonl']);
    expect(d).toEqual({ status: 0, signal: null, stderr: '', stdout: cli(['dump', trace, '--table', 'spinlock', '--format', 'jsonl']).stdout });
    expect(spoolsLeft()).toEqual([]);
  });

  test.skipIf(!posix)('the library refuses a FIFO at once instead of blocking in open()', async () => {
    const fifo = join(dir, 'lib.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(streamFile(fifo, {})).rejects.toThrow(`cannot read ${fifo}: not a regular file (decoding needs random access`);
  });
});

describe('nothing on stdout before the input is known to be readable', () => {
  test('dump of a missing file: no CSV header, one line, exit 1', () => {
    const f = join(dir, 'missing.etl');
    expect(cli(['dump', f])).toEqual({ status: 1, stdout: '', stderr: `etw-decode: cannot open ${f}: no such file\n` });
  });

  test('dump of a directory', () => {
    expect(cli(['dump', dir])).toEqual({ status: 1, stdout: '', stderr: `etw-decode: cannot open ${dir}: it is a directory\n` });
  });

  test('dump of a file that is not ETL: no CSV header', () => {
    const f = join(dir, 'text3.etl');
    writeFileSync(f, 'definitely not a trace'.repeat(20));
    const r = cli(['dump', f, '--format', 'jsonl', '--table', 'spinlock']);
    expect([r.status, r.stdout]).toEqual([1, '']);
  });
});

describe('exit codes: 2 for a bad command line, 1 at run time', () => {
  const usage = '(run with --help for usage)\n';
  test.each([
    [['foo'], "etw-decode: unknown command 'foo'\n"],
    [['dump'], "etw-decode: missing required argument 'file'\n"],
    [['summary'], "etw-decode: missing required argument 'file'\n"],
    [['dump', 'x.etl', '--table', 'nope'], `etw-decode: option '--table <table>' argument 'nope' is invalid. Allowed choices are ${[...TABLE_NAMES, 'events'].join(', ')}.\n`],
    [['dump', 'x.etl', '--format', 'xml'], "etw-decode: option '--format <format>' argument 'xml' is invalid. Allowed choices are csv, jsonl.\n"],
    [['summary', 'x.etl', '--engine', 'gpu'], "etw-decode: option '--engine <engine>' argument 'gpu' is invalid. Allowed choices are wasm, reference.\n"],
    [['summary', 'x.etl', '--bias', 'x'], "etw-decode: option '--bias <n>' argument 'x' is invalid. expected an integer MaximumWaitReason in 1..63 (e.g. 40 for Windows 10 2004+)\n"],
    [['summary', 'x.etl', '--frobnicate'], "etw-decode: unknown option '--frobnicate'\n"],
    [['summary', 'a.etl', 'b.etl'], "etw-decode: too many arguments for 'summary'. Expected 1 argument but got 2.\n"],
  ])('%j → 2', (args, line) => {
    expect(cli(args)).toEqual({ status: 2, stdout: '', stderr: line + usage });
  });

  test('help and version → 0', () => {
    expect(cli(['--version'])).toEqual({ status: 0, stdout: '0.1.0\n', stderr: '' });
    expect(cli(['dump', '--help']).status).toBe(0);
  });
});

describe('dump says on stderr when data was lost or the table is empty (exit 0 all the same)', () => {
  let corrupt: string;
  let noSpin: string;
  beforeAll(() => {
    const events: EventSpec[] = cswitches(2000, 2);
    // CSwitch events of a version no decoder knows: counted, not decoded
    for (let i = 0; i < 5; i++) {
      events.push({ kind: 'raw', cpu: 0, timestamp: 1_020_000n + BigInt(i), headerType: 'PERFINFO64', hookId: 0x0524, version: 9, payload: new Uint8Array(0x18) });
    }
    // kernel flags: CSWITCH on, SPINLOCK off
    const t = writeTrace({ numberOfProcessors: 2, bufferSize: 0x1000, events, groupMasks: [0, 0x4, 0, 0, 0, 0, 0, 0] });
    noSpin = join(dir, 'no-spinlock.etl');
    writeFileSync(noSpin, t.bytes);
    // two buffers whose BufferSize is past the 64 MiB limit: skipped, and the decoder resyncs
    const b = t.bytes.slice();
    for (const i of [3, 6]) new DataView(b.buffer).setUint32(t.buffers[i]!.fileOffset, 0xffffffff, true);
    corrupt = join(dir, 'corrupt.etl');
    writeFileSync(corrupt, b);
  });

  test('corrupt buffers and undecodable events: one line, exit 0, the rows that could be decoded', () => {
    const r = cli(['dump', corrupt]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(
'etw-decode: 2 corrupt buffers skipped, 5 events not decoded, 8192 bytes skipped — see `etw-decode summary`\n');
    expect(r.stdout.trimEnd().split('\n').length - 1).toBe(decodeSync(readFileSync(corrupt)).cswitch.length);
  });

  test('an empty table names the kernel flag, and says it was off', () => {
    // the dump decodes the spinlock events only (decodedTablesFor): the undecodable CSwitch events are not this table's
    const r = cli(['dump', noSpin, '--table', 'spinlock', '-o', join(dir, 'spin.csv')]);
    expect(r).toEqual({
      status: 0,
      stdout: '',
      stderr: 'etw-decode: no spinlock rows: the trace has no events for this table (the kernel flag SPINLOCK was off)\n',
    });
    // …the cswitch dump says they were lost
    expect(cli(['dump', noSpin, '--table', 'cswitch', '-o', join(dir, 'cs.csv')]).stderr).toBe('etw-decode: 5 events not decoded — see `etw-decode summary`\n');
  });

  test('an empty table in a clean trace whose flag was on', () => {
    const t = writeTrace({ numberOfProcessors: 2, bufferSize: 0x1000, events: cswitches(100, 2) }); // default masks: CSWITCH, COMPACT_CSWITCH, SPINLOCK
    const f = join(dir, 'clean.etl');
    writeFileSync(f, t.bytes);
    expect(cli(['dump', f, '--table', 'spinlock'])).toEqual({
      status: 0,
      stdout: cli(['dump', f, '--table', 'spinlock', '--format', 'csv']).stdout,
      stderr: 'etw-decode: no spinlock rows: the trace has no events for this table (although the kernel flag SPINLOCK was on)\n',
    });
    expect(cli(['dump', f]).stderr).toBe('');
  });

  test('summary text says what was lost', () => {
    const r = cli(['summary', corrupt]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('\ndiagnostics:\n  data lost: 2 corrupt buffers skipped, 5 events not decoded, 8192 bytes skipped\n');
    expect(cli(['summary', trace]).stdout).toContain('\ndiagnostics:\n  no problems found\n');
  });
});

describe('the words for lost data and empty tables', () => {
  test('every dataLoss counter has a phrase; every phrase names known counters', () => {
    const known = new Set([...COUNTERS.map((c) => c.name), 'logfileEventsLost', 'logfileBuffersLost']);
    const said = new Set(DATA_LOSS_PHRASES.flatMap((g) => [...g.counters, ...(g.covers ?? [])]));
    for (const name of said) expect(known).toContain(name);
    for (const c of COUNTERS.filter((c) => c.severity === 'dataLoss')) expect(said).toContain(c.name);
    for (const c of COUNTERS.filter((c) => c.severity !== 'dataLoss')) expect(said).not.toContain(c.name);
  });

  test('phrases, plurals, and the logger’s own losses', () => {
    expect(dataLossText({ buffersCorrupt: 0 })).toBeNull();
    expect(dataLossText({ buffersCorrupt: 1, cswitchSkippedShort: 1 })).toBe('1 corrupt buffer skipped, 1 event not decoded');
    expect(dataLossText({ buffersTruncatedWalk: 2, eventsBadMarker: 2, bytesAbandoned: 100, truncatedTailBytes: 3 })).toBe(
      '2 buffers cut short by an invalid event, 103 bytes skipped',
    );
    expect(dataLossText({ logfileEventsLost: 7, buffersWithEventsLostFlag: 1 })).toBe('1 buffer flagged EVENTS_LOST, 7 events lost by the logger');
  });

  test('kernel flags: declared for every table of events in the registry, read from the trace’s group masks', () => {
    // traces describes the trace itself (logfile header and decode), not events: it alone has none
    for (const t of Object.values(TABLES)) expect([t.name, t.kernelFlags.length > 0]).toEqual([t.name, t.name !== 'traces']);
    // the registry's constants agree with the masks the logfile header parser names (docs/format.md §A.9)
    const on = (mask: number) => {
      const m = [0, 0, 0, 0, 0, 0, 0, 0];
      m[mask >>> 29] = mask & 0x1fffffff;
      return groupMasks(Uint32Array.from(m));
    };
    expect(on(TABLES.cswitch.kernelFlags[0].groupMask).contextSwitch).toBe(true);
    expect(on(TABLES.spinlock.kernelFlags[0].groupMask).spinLock).toBe(true);
    const summary = { ...decodeSync(bytes).summary, trace: null } as TraceSummary;
    expect(emptyTableText('spinlock', summary)).toBe('no spinlock rows: the trace has no events for this table (they are recorded with the kernel flag SPINLOCK)');
  });
});
