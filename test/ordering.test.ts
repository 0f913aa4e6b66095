// decodeOrder (src/framing/ordering.ts, docs/format.md §A.7): the header buffer first, then SequenceNumber
// order (sequenceOrder), stable by file position, for every input shape its fast paths take — in order, dense
// (counting sort), sparse (one double sort), beyond 2^53 (radix sort), small (comparison sort), negative
// SequenceNumbers.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { BufferTable } from '../src/framing/buffers.js';
import * as L from '../src/generated/layout.js';
import { decodeOrder, sequenceOrder } from '../src/framing/ordering.js';

function tableOf(seqs: readonly bigint[]): BufferTable {
  const t = new BufferTable(4);
  const head = new DataView(new ArrayBuffer(L.WMI_BUFFER_HEADER_SIZE));
  seqs.forEach((s, i) => {
    head.setBigInt64(L.BUF_SEQUENCE_NUMBER, s, true);
    t.push(head, 0, i * 0x100, 0x100, false);
  });
  return t;
}

const expected = (seqs: readonly bigint[]) =>
  seqs.map((s, i) => ({ s, i })).sort((a, b) => (a.s < b.s ? -1 : a.s > b.s ? 1 : a.i - b.i)).map((x) => x.i);

describe('decodeOrder', () => {
  const shapes = {
    dense: (n: number) => fc.array(fc.bigInt({ min: 1000n, max: 1000n + BigInt(2 * n) }), { minLength: n, maxLength: n }),
    sparse: (n: number) => fc.array(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), { minLength: n, maxLength: n }),
    huge: (n: number) => fc.array(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { minLength: n, maxLength: n }),
    repeated: (n: number) => fc.array(fc.bigInt({ min: 5n, max: 8n }), { minLength: n, maxLength: n }),
  };
  for (const [name, arb] of Object.entries(shapes)) {
    test(`${name} SequenceNumbers, small and large tables: sorted, stable by position`, () => {
      fc.assert(
        fc.property(fc.oneof(arb(0), arb(1), arb(7), arb(300), arb(1500)), (seqs) => {
          expect(Array.from(sequenceOrder(tableOf(seqs)))).toEqual(expected(seqs));
          // the decode order: the header buffer (record 0) first, whatever its SequenceNumber, then the same
          const rest = expected(seqs).filter((i) => i !== 0);
          expect(Array.from(decodeOrder(tableOf(seqs)))).toEqual(seqs.length ? [0, ...rest] : []);
        }),
        { numRuns: 40 },
      );
    });
  }

  test('dense and shuffled, 200 000 buffers (the counting sort): the order, and memory from the buffers, not the numbers', () => {
    const n = 200_000;
    const seqs = Array.from({ length: n }, (_, i) => BigInt(i % 2 ? n / 2 + (i >> 1) : i >> 1) + 7n); // two interleaved halves
    const order = sequenceOrder(tableOf(seqs));
    expect(Array.from(order.subarray(0, 4))).toEqual([0, 2, 4, 6]);
    expect(Array.from(order)).toEqual(expected(seqs));
  });
});
