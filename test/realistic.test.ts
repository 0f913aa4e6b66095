// The realistic trace generator (src/writer/realistic.ts): its rates per MiB within the stated bounds,
// deterministic by seed and the same bytes streamed or in memory, an exact BuffersWritten, and a clean
// decode on both engines (no dataLoss or error counter, no issue, the engines agree, the streaming cpuUsage
// derivation needs neither late events nor held rows).
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { COUNTERS, CpuUsageDeriver, decodeStream, decodeSync, isWholeTraceTable, TABLE_NAMES, threadStates, wholeTraceTable, type DecodeResult, type Table } from '../src/node.js';
import { generateRealisticTrace, generateRealisticTraceChunks, type RealisticTraceOptions } from '../src/writer/index.js';

const MiB = 2 ** 20;
const sha1 = (chunks: Iterable<Uint8Array>): string => {
  const h = createHash('sha1');
  for (const c of chunks) h.update(c);
  return h.digest('hex');
};
const u32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;

/** events of the trace per kind name (PERFINFO/SYSTEM hooks by name or hook id, providers by header type) */
function kindCounts(r: DecodeResult): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of r.summary.eventsByKind) {
    const key = k.name ?? (k.hookId !== undefined ? `hook ${k.hookId.toString(16)}` : k.headerType);
    m.set(key, (m.get(key) ?? 0) + k.count);
  }
  return m;
}

/** counters that say something was lost or wrong */
function problems(r: DecodeResult): Record<string, number> {
  const bad: Record<string, number> = {};
  for (const c of COUNTERS) if (c.severity !== 'info' && r.summary.diagnostics[c.name]) bad[c.name] = r.summary.diagnostics[c.name]!;
  return bad;
}

describe('generateRealisticTrace', () => {
  test('rates per MiB within bounds: Thread/SetName, samples, provider kinds, switches, ReadyThread, SpinLock', () => {
    const g = generateRealisticTrace({ seed: 11, targetBytes: 8 * MiB });
    const r = decodeSync(g.bytes, { engine: 'wasm' });
    expect(problems(r)).toEqual({});
    const mib = g.bytes.length / MiB;
    const k = kindCounts(r);
    const per = (name: string) => (k.get(name) ?? 0) / mib;
    // thread churn and names, rundowns apart (they do not grow with the file)
    const churn = per('Thread/Start') + per('Thread/End') + per('Thread/SetName');
    expect(churn).toBeGreaterThan(950);
    expect(churn).toBeLessThan(1500);
    expect(per('Thread/Start')).toBeGreaterThan(60);
    expect(per('Thread/SetName')).toBeGreaterThan(600);
    // rundowns at both ends: the world at the start (~1,200 threads, 100 processes), and what is alive at the end
    expect(k.get('Thread/DCStart')).toBeGreaterThan(1100);
    expect(k.get('Thread/DCEnd')).toBeGreaterThan(1100);
    expect(k.get('Process/DCStart')).toBeGreaterThanOrEqual(100);
    expect(k.get('Process/DCEnd')).toBeGreaterThan(90);
    expect(k.get('Process/Start')).toBeGreaterThan(0);
    expect(k.get('Process/End')).toBeGreaterThan(0);
    // SampledProfile (PERFINFO_LOG_TYPE_SAMPLED_PROFILE 0x0F2E), 1 ms per CPU, every one a samples row
    expect(per('PERFINFO_LOG_TYPE_SAMPLED_PROFILE')).toBeGreaterThan(2000);
    expect(per('PERFINFO_LOG_TYPE_SAMPLED_PROFILE')).toBeLessThan(4500);
    expect(r.samples.length).toBe(k.get('PERFINFO_LOG_TYPE_SAMPLED_PROFILE'));
    // provider events: many kinds
    const providerKinds = r.summary.eventsByKind.filter((x) => x.headerType === 'EVENT_HEADER64');
    expect(providerKinds.length).toBeGreaterThan(300);
    expect(new Set(providerKinds.map((x) => x.provider)).size).toBeGreaterThanOrEqual(30);
    expect(providerKinds.some((x) => x.extended)).toBe(true);
    expect(per('EVENT_HEADER64')).toBeGreaterThan(1500);
    // compact switches (every CPU), ReadyThread, SpinLock
    expect(r.summary.compact.batches).toBeGreaterThan(0);
    expect(k.get('PERFINFO_LOG_TYPE_CONTEXTSWAP') ?? 0).toBe(0);
    expect(r.cswitch.length / mib).toBeGreaterThan(8000);
    expect(r.readythread.length / mib).toBeGreaterThan(4000);
    expect(r.spinlock.length / mib).toBeGreaterThan(500);
    // thread lifetimes: the initial world plus the churn
    expect(r.threads.length).toBeGreaterThan(1200 + 60 * mib);
    expect(r.processes.length).toBeGreaterThan(100);
  });

  test('deterministic by seed; streamed chunks = the trace in memory; about targetBytes; exact BuffersWritten', () => {
    const opts: RealisticTraceOptions[] = [
      { seed: 1, targetBytes: 2 * MiB },
      { seed: 2, targetBytes: 1_500_000, cpus: 3, pointerSize: 4, switches: 'mixed', bufferSize: 0x8000 },
      { seed: 3, targetBytes: 1_200_000, compress: true, processes: 20, threads: 200, switches: 'cswitch' },
    ];
    for (const o of opts) {
      const g = generateRealisticTrace(o);
      expect(sha1([generateRealisticTrace(o).bytes])).toBe(sha1([g.bytes]));
      expect(sha1(generateRealisticTraceChunks(o))).toBe(sha1([g.bytes]));
      // BuffersWritten of the logfile header (after the 0x48-byte buffer header and the 0x20-byte SYSTEM header)
      expect(u32(g.bytes, 0x48 + 0x20 + 0x24)).toBe(g.buffers.length);
      expect(Math.abs(g.bytes.length - o.targetBytes)).toBeLessThan(o.targetBytes * 0.15 + (o.bufferSize ?? 0x10000));
    }
    expect(sha1([generateRealisticTrace({ seed: 4, targetBytes: 2 * MiB }).bytes])).not.toBe(sha1([generateRealisticTrace(opts[0]!).bytes]));
  });

  test('streams chunk by chunk: the first chunk is the header buffer, every other one a data buffer', () => {
    const it = generateRealisticTraceChunks({ seed: 5, targetBytes: 3 * MiB });
    const first = it.next();
    expect(first.done).toBe(false);
    let n = 0;
    for (const c of it) {
      expect(c.length).toBe(0x10000);
      n++;
    }
    expect(n + 1).toBe(u32(first.value as Uint8Array, 0x48 + 0x20 + 0x24));
  });

  test('options are checked', () => {
    expect(() => generateRealisticTrace({ seed: 1, targetBytes: MiB, switches: 'x' as 'compact' })).toThrow(/switches/);
    expect(() => generateRealisticTrace({ seed: 1, targetBytes: MiB, processes: 4 })).toThrow(/processes/);
    expect(() => generateRealisticTrace({ seed: 1, targetBytes: MiB, processes: 50, threads: 40 })).toThrow(/threads/);
    expect(() => generateRealisticTrace({ seed: 1, targetBytes: -1 })).toThrow(/targetBytes/);
    // the smallest trace holds both rundowns
    const tiny = decodeSync(generateRealisticTrace({ seed: 1, targetBytes: 0 }).bytes);
    expect(problems(tiny)).toEqual({});
    expect(kindCounts(tiny).get('Thread/DCEnd')).toBeGreaterThan(1100);
  });
});

describe('decodes clean on both engines', () => {
  const cases: [string, RealisticTraceOptions][] = [
    ['x64, compact switches', { seed: 21, targetBytes: 2 * MiB }],
    ['x86, mixed switches, 3 CPUs, compressed', { seed: 22, targetBytes: 1_500_000, cpus: 3, pointerSize: 4, switches: 'mixed', compress: true, bufferSize: 0x8000 }],
  ];
  for (const [name, o] of cases) {
    test(name, async () => {
      const bytes = generateRealisticTrace(o).bytes;
      const w = decodeSync(bytes, { engine: 'wasm' });
      const ref = decodeSync(bytes, { engine: 'reference' });
      expect(problems(w)).toEqual({});
      expect(w.summary.issues).toEqual([]);
      expect({ ...w.summary, engine: '' }).toEqual({ ...ref.summary, engine: '' });
      for (const t of TABLE_NAMES) {
        if (t === 'cpuUsage') continue;
        const [p, q]: Table[] = isWholeTraceTable(t) ? [wholeTraceTable(w, t), wholeTraceTable(ref, t)] : [w[t], ref[t]];
        expect(p.length, t).toBe(q.length);
        p.columns.forEach((col, i) => expect(col, `${t}.${p.specs[i]!.name}`).toEqual(q.columns[i]));
      }
      expect(w.threadEvents.length).toBeGreaterThan(1000);
      expect(w.processEvents.length).toBeGreaterThan(100);
      // the cpuUsage derivation as dump and cpu run it (streaming): nothing late, no row waits for a process id
      let rows = 0;
      const deriver = new CpuUsageDeriver((t) => (rows += t.length));
      const res = await decodeStream(bytes, { rows: 'borrow', threads: 1, onRows: (c) => deriver.add(c.cswitch, c.readythread, c.threadEvents) });
      const stats = deriver.finish();
      expect(stats.lateEvents).toBe(0);
      expect(stats.heldRows).toBe(0);
      expect(stats.unresolvedRows).toBe(0);
      expect(rows).toBe(res.summary.cpuUsage);
    });
  }
});
