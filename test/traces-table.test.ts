// The `traces` table: one row per decode describing the trace (source, machine, clock anchor, losses),
// exact 64-bit values, and the anchor that turns timeNs into absolute UTC.
import { describe, expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeFile, decodeSync } from '../src/node.js';
import { fileTimeToIso } from '../src/result/trace-row.js';
import { VERSION } from '../src/version.js';
import { generateMixedTrace } from '../src/writer/index.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));

describe('fileTimeToIso', () => {
  test('keeps all seven 100 ns digits', () => {
    expect(fileTimeToIso(116444736000000000n)).toBe('1970-01-01T00:00:00.0000000Z');
    expect(fileTimeToIso(116444736000000001n)).toBe('1970-01-01T00:00:00.0000001Z');
    expect(fileTimeToIso(133485408123456789n)).toBe('2024-01-01T00:00:12.3456789Z');
    expect(fileTimeToIso(116444735999999999n)).toBe('1969-12-31T23:59:59.9999999Z');
  });
});

describe('traces table', () => {
  const { bytes } = generateMixedTrace({ seed: 5, targetBytes: 150_000, cpus: 2, bufferSize: 0x4000 });

  test('one row from the logfile header, the clock and the decode', () => {
    const r = decodeSync(bytes);
    expect(r.traces.length).toBe(1);
    expect(r.summary.traces).toBe(1);
    const row = r.traces.get(0);
    const info = r.info!;
    expect(row.sourcePath).toBeNull();
    expect(row.fileSize).toBe(BigInt(bytes.length));
    expect(row.loggerName).toBe(info.loggerName || null);
    expect(row.build).toBe(info.build);
    expect(row.numberOfProcessors).toBe(info.numberOfProcessors);
    expect(row.clockType).toBe(info.clockType);
    expect(row.ticksPerSecond).toBe(r.clock!.ticksPerSecond);
    expect(row.anchorTicks).toBe(info.headerTimestamp);
    expect(row.anchorFileTime).toBe(r.clock!.anchorFileTime);
    expect(row.anchorUtc).toBe(fileTimeToIso(r.clock!.anchorFileTime));
    expect(row.buffers).toBe(r.summary.buffers);
    expect(row.events).toBe(BigInt(r.summary.events));
    expect(row.buffersCorrupt).toBe(0);
    expect(row.dataLoss).toBeNull();
    expect(row.decoder).toBe(`etw-decode ${VERSION}`);
  });

  test('a corrupt buffer shows in buffersCorrupt and dataLoss', () => {
    const bad = bytes.slice();
    new DataView(bad.buffer).setUint32(3 * 0x4000, 0, true); // BufferSize 0 in the fourth buffer
    const row = decodeSync(bad).traces.get(0);
    expect(row.buffersCorrupt).toBeGreaterThan(0);
    expect(row.dataLoss).toMatch(/corrupt/);
  });

  test('decodeFile records the path; dump --table traces writes the row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etw-traces-'));
    const path = join(dir, 'mixed.etl');
    writeFileSync(path, bytes);
    const r = await decodeFile(path);
    expect(r.traces.get(0).sourcePath).toBe(path);
    const out = execFileSync(process.execPath, [BIN, 'dump', path, '--table', 'traces', '--format', 'jsonl'], { encoding: 'utf8' });
    const lines = out.trim().split('\n');
    expect(lines.length).toBe(1);
    const json = JSON.parse(lines[0]!);
    expect(json.sourcePath).toBe(path);
    expect(json.fileSize).toBe(String(bytes.length)); // 64-bit columns are decimal strings
    expect(json.anchorTicks).toBe(r.info!.headerTimestamp.toString());
    expect(json.decoder).toBe(`etw-decode ${VERSION}`);
  });

  test('VERSION is the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(VERSION).toBe(pkg.version);
  });
});
