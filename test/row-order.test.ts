// The order rows come out in, as README "Row order" and docs/format.md "Row order" state it: decode
// order; within one processor, CSwitch-event rows are in time order and compact rows are in time order
// among themselves — but the two kinds interleave by decode position, not by time.
import { expect, test } from 'vitest';
import { decodeSync } from '../src/node.js';
import { generateMixedTrace } from '../src/writer/index.js';

// CSwitch events and compact batches on the same CPUs (the previous bundled sample)
const sample = generateMixedTrace({ seed: 2026, targetBytes: 256 * 1024, cpus: 4, bufferSize: 0x4000 }).bytes;

test('per processor: each row kind in time order; across kinds only decode order', () => {
  for (const engine of ['wasm', 'reference'] as const) {
    const t = decodeSync(sample, { engine }).cswitch;
    const cpu = t.column('cpu') as Uint16Array;
    const ts = t.column('timestamp') as BigInt64Array;
    const source = t.column('source') as Uint8Array;
    const last = new Map<string, bigint>();
    let backwardsAcrossKinds = 0;
    const lastAny = new Map<number, bigint>();
    for (let i = 0; i < t.length; i++) {
      const kind = `${cpu[i]}/${source[i] === 0 ? 'event' : 'compact'}`;
      const prev = last.get(kind);
      if (prev !== undefined) expect(ts[i]! >= prev, `row ${i} (${kind}) goes back in time`).toBe(true);
      last.set(kind, ts[i]!);
      const prevAny = lastAny.get(cpu[i]!);
      if (prevAny !== undefined && ts[i]! < prevAny) backwardsAcrossKinds++;
      lastAny.set(cpu[i]!, ts[i]!);
    }
    // this trace mixes both kinds on one CPU: the documented exception does occur
    expect(backwardsAcrossKinds).toBe(20);
  }
});
