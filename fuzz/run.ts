// `npm run fuzz -- [--count N | --time SECONDS] [--seed S] [--from I] [--no-minimize] [--fixtures DIR]`
// Mutation fuzzer over the writer's traces and the real corpus; both engines compared, windowed against
// in-memory decoding, invariants checked (fuzz/check.ts). Failures are minimised into test/fixtures/fuzz/.
// Exit code 1 when an input failed.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fuzz, type FuzzStats } from './fuzz.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const USAGE = `usage: npm run fuzz -- [options]

  --count N        inputs to run (default 10000 unless --time is given)
  --time SECONDS   run for this long
  --seed S         run seed (default 1); input i of seed S is always the same input
  --from I         first input index (default 0): --seed S --from I --count 1 replays one input
  --fixtures DIR   where minimised failures are written (default test/fixtures/fuzz)
  --no-minimize    write failing inputs as they are`;

function line(s: FuzzStats, final: boolean): string {
  const rate = s.seconds > 0 ? s.inputs / s.seconds : 0;
  const head = `${final ? 'fuzz done' : 'fuzz'}: ${s.inputs} inputs in ${s.seconds.toFixed(0)} s (${rate.toFixed(0)} inputs/s, ${(s.bytes / s.inputs / 1024 || 0).toFixed(0)} KiB average), ${s.failures} failures`;
  return s.distinct.length ? `${head} (${s.distinct.length} distinct)` : head;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string' },
      time: { type: 'string' },
      seed: { type: 'string', default: '1' },
      from: { type: 'string', default: '0' },
      fixtures: { type: 'string' },
      'no-minimize': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const num = (name: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: expected a non-negative integer, got ${v}`);
    return n;
  };
  const seconds = num('time', values.time);
  const count = num('count', values.count) ?? (seconds === undefined ? 10_000 : undefined);
  const seed = num('seed', values.seed)!;
  const fixtures = resolve(values.fixtures ?? `${ROOT}/test/fixtures/fuzz`);
  const stats = await fuzz({
    seed,
    from: num('from', values.from),
    count,
    seconds,
    root: ROOT,
    fixtures,
    minimize: !values['no-minimize'],
    report: (s, final) => {
      process.stderr.write(line(s, final) + '\n');
      if (final) {
        process.stderr.write(`  mutations: ${Object.entries(s.byOp).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
        for (const d of s.distinct) {
          process.stderr.write(`  FAIL ${d.signature}\n    input ${d.index} (seed ${seed}) from ${d.seed} by ${d.ops.join(', ')}${d.fixture ? `; fixture ${fixtures}/${d.fixture}.etl` : ''}\n    ${d.failure.message.split('\n')[0]}\n`);
        }
      }
    },
  });
  console.log(JSON.stringify({ seed, inputs: stats.inputs, seconds: Number(stats.seconds.toFixed(1)), inputsPerSecond: Math.round(stats.inputs / stats.seconds), failures: stats.failures, distinct: stats.distinct.map((d) => d.signature) }));
  return stats.failures ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(2);
  },
);
