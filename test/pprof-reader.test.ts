// The pprof profiles of `cpu --sampled --pprof` and `cpu --waits --pprof` read by an independent pprof library
// (pprof-format, Datadog's reader and writer of perftools.profiles, as `go tool pprof` and speedscope read them):
// every sample's locations, functions, mappings and strings resolve, and the totals are those of the analyses.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { describe, expect, test } from 'vitest';
import { analyzeSamples } from '../src/analysis/samples.js';
import { cpuUsage, decodeSync } from '../src/node.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-pprof-reader-'));
const bytes = writeTrace(simulateSchedule({ seed: 4, cpus: 3, duration: 1_500_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes;
const file = join(dir, 'stacks.etl');
writeFileSync(file, bytes);
const r = decodeSync(bytes);

/** The profile `cpu <args> --pprof` writes, decoded by pprof-format, with every reference checked. */
function profileOf(...args: string[]) {
  const out = join(dir, `${args.join('')}.pb.gz`);
  const x = spawnSync(process.execPath, [BIN, 'cpu', file, ...args, '--pprof', out], { encoding: 'utf8' });
  expect(x.status, x.stderr).toBe(0);
  const p = Profile.decode(gunzipSync(readFileSync(out)));
  const str = (i: number | bigint) => {
    expect(Number(i)).toBeLessThan(p.stringTable.strings.length);
    return p.stringTable.strings[Number(i)]!;
  };
  expect(str(0)).toBe('');
  const functions = new Map(p.function.map((f) => [Number(f.id), str(f.name)]));
  const mappings = new Set(p.mapping.map((m) => Number(m.id)));
  const locations = new Map(
    p.location.map((l) => {
      if (Number(l.mappingId) !== 0) expect(mappings.has(Number(l.mappingId))).toBe(true);
      expect(l.line.length).toBeGreaterThan(0);
      return [Number(l.id), l.line.map((ln) => functions.get(Number(ln.functionId))!)];
    }),
  );
  const samples = p.sample.map((s) => ({
    values: s.value.map(BigInt),
    frames: s.locationId.map((id) => {
      const f = locations.get(Number(id));
      expect(f, `location ${id}`).toBeDefined();
      return f![0]!;
    }),
  }));
  for (const s of samples) for (const f of s.frames) expect(typeof f).toBe('string');
  return { types: p.sampleType.map((t) => [str(t.type), str(t.unit)]), samples };
}

const sum = (s: { values: bigint[] }[], k: number) => s.reduce((n, x) => n + x.values[k]!, 0n);

describe('pprof read by pprof-format', () => {
  test('cpu --sampled --pprof: the samples and CPU time of analyzeSamples, stacks of several frames', () => {
    const p = profileOf('--sampled');
    const a = analyzeSamples(r);
    expect(p.types).toEqual([['samples', 'count'], ['cpu', 'nanoseconds']]);
    expect(sum(p.samples, 0)).toBe(BigInt(a.weight));
    expect(sum(p.samples, 1)).toBe(BigInt(Math.round(a.cpuMs! * 1e6)));
    expect(Math.max(...p.samples.map((s) => s.frames.length))).toBeGreaterThan(1);
  });

  test('cpu --waits --pprof: one sample per wait, the blocked nanoseconds of cpuUsage, READIED BY frames', () => {
    const p = profileOf('--waits');
    const waits = cpuUsage(r).toArray().filter((u) => u.waits !== null);
    expect(p.types).toEqual([['waits', 'count'], ['wait', 'nanoseconds']]);
    expect(sum(p.samples, 0)).toBe(BigInt(waits.length));
    expect(sum(p.samples, 1)).toBe(waits.reduce((n, u) => n + (u.waits! * 1_000_000_000n) / r.clock!.ticksPerSecond!, 0n));
    expect(p.samples.some((s) => s.frames.some((f) => f.startsWith('READIED BY ')))).toBe(true);
  });
});
