// The fuzz loop (`npm run fuzz`, fuzz/run.ts; a short fixed-seed run in test/fuzz.test.ts): mutated seeds
// (fuzz/mutate.ts, fuzz/seeds.ts) through the oracle (fuzz/check.ts); a failing input is minimised and
// written as a regression fixture (test/fixtures/fuzz/*.etl, decoded by test/fuzz.test.ts). Input i of
// seed S is the same on every machine: `--seed S --from i --count 1` reproduces it.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../src/writer/index.js';
import { checkInput, type CheckOptions, type Failure } from './check.js';
import { mutate } from './mutate.js';
import { corpusSeeds, writerSeeds, type Seed } from './seeds.js';

export interface FuzzOptions {
  seed: number;
  /** first input index (default 0) */
  from?: number;
  /** inputs to run (default unlimited: until `seconds`) */
  count?: number;
  /** stop after this many seconds */
  seconds?: number;
  /** repository root (for the corpus) */
  root: string;
  /** where minimised failures go (none written without it) */
  fixtures?: string;
  minimize?: boolean;
  /** called every few seconds and at the end */
  report?: (s: FuzzStats, final: boolean) => void;
  seeds?: Seed[];
}

export interface FuzzStats {
  inputs: number;
  seconds: number;
  failures: number;
  /** first failure of each signature (kind + what) */
  distinct: { signature: string; index: number; seed: string; ops: string[]; failure: Failure; fixture?: string }[];
  bytes: number;
  byOp: Record<string, number>;
}

/** The deterministic Rng of input `index` of run `seed`. */
export function inputRng(seed: number, index: number): Rng {
  return new Rng((Math.imul(seed, 0x9e3779b1) + Math.imul(index, 0x85ebca6b) + index) | 0);
}

/** The check options of input `index` (windows of 4–32 KiB; the reference streamed every 8th input). */
export function checkOptionsFor(rng: Rng, index: number): CheckOptions {
  const windowBytes = rng.pick([0x1000, 0x1000, 0x2000, 0x3000, 0x8000]);
  // every 2nd input also in partitions (src/parallel): 1 to 4 cuts among the first 48 decode positions, from
  // their own Rng (the input's is not drawn from: input i of seed S stays what it was)
  const cutRng = new Rng(Math.imul(index, 0x2545f491) ^ 0x5bd1e995);
  const parallelCuts = index % 2 === 1 ? Array.from({ length: cutRng.int(1, 4) }, () => cutRng.int(1, 48)) : undefined;
  return { windowBytes, streamReference: index % 8 === 0, parallelCuts };
}

/** The seeds of a run: the writer's and the corpus's. */
export function allSeeds(root: string): Seed[] {
  return [...writerSeeds(), ...corpusSeeds(root)];
}

/** Shrinks a failing input (made from `seed`) while it fails the same way (same kind and `what`), within `budget` checks. */
export async function minimize(bytes: Uint8Array, failure: Failure, options: CheckOptions, budget = 2000, seed?: Seed): Promise<Uint8Array> {
  let best = bytes;
  let tries = 0;
  const same = async (b: Uint8Array): Promise<boolean> => {
    tries++;
    const f = await checkInput(b, options, seed);
    return f !== null && f.kind === failure.kind && f.what === failure.what;
  };
  // the shortest failing prefix (steps from half the input down to 8 bytes)
  for (let step = best.length >> 1; step >= 8 && tries < budget; step >>= 1) {
    while (best.length - step > 0 && tries < budget && (await same(best.subarray(0, best.length - step)))) best = best.slice(0, best.length - step);
  }
  // drop chunks, large to small
  for (let size = best.length >> 1; size >= 8 && tries < budget; size >>= 1) {
    for (let at = 0; at + size <= best.length && tries < budget; ) {
      const without = new Uint8Array(best.length - size);
      without.set(best.subarray(0, at));
      without.set(best.subarray(at + size), at);
      if (await same(without)) best = without;
      else at += size;
    }
  }
  return best;
}

export async function fuzz(o: FuzzOptions): Promise<FuzzStats> {
  const seeds = o.seeds ?? allSeeds(o.root);
  const stats: FuzzStats = { inputs: 0, seconds: 0, failures: 0, distinct: [], bytes: 0, byOp: {} };
  const started = performance.now();
  let lastReport = started;
  const from = o.from ?? 0;
  for (let i = from; o.count === undefined || i < from + o.count; i++) {
    const now = performance.now();
    if (o.seconds !== undefined && now - started >= o.seconds * 1000) break;
    if (o.report && now - lastReport >= 5000) {
      lastReport = now;
      stats.seconds = (now - started) / 1000;
      o.report(stats, false);
    }
    const rng = inputRng(o.seed, i);
    const input = mutate(seeds, rng);
    const options = checkOptionsFor(rng, i);
    stats.inputs++;
    stats.bytes += input.bytes.length;
    for (const op of input.ops) stats.byOp[op] = (stats.byOp[op] ?? 0) + 1;
    const failure = await checkInput(input.bytes, options, input.from);
    if (!failure) continue;
    stats.failures++;
    const signature = `${failure.kind}: ${failure.what}`;
    if (stats.distinct.some((d) => d.signature === signature)) continue;
    const entry: FuzzStats['distinct'][number] = { signature, index: i, seed: input.seed, ops: input.ops, failure };
    stats.distinct.push(entry);
    if (o.fixtures) {
      const small = o.minimize === false ? input.bytes : await minimize(input.bytes, failure, options, 2000, input.from);
      const name = `${failure.kind}-${createHash('sha1').update(small).digest('hex').slice(0, 10)}`;
      mkdirSync(o.fixtures, { recursive: true });
      writeFileSync(join(o.fixtures, `${name}.etl`), small);
      writeFileSync(
        join(o.fixtures, `${name}.txt`),
        `${failure.message}\nfound by: npm run fuzz -- --seed ${o.seed} --from ${i} --count 1 (seed input ${input.seed}, mutations ${input.ops.join(', ')}); ` +
          `window ${options.windowBytes}; minimised ${input.bytes.length} -> ${small.length} bytes\n`,
      );
      entry.fixture = name;
    }
  }
  stats.seconds = (performance.now() - started) / 1000;
  o.report?.(stats, true);
  return stats;
}
