// Compares a run with a baseline result file: change of MB/s (median iteration) per case and engine.
// A case is a regression when it is slower than the baseline by more than the threshold (default 15 %).
// Used by run.ts (`npm run bench -- --compare bench/baseline.json`) and standalone:
//   node dist-bench/bench/compare.js BASELINE.json CURRENT.json [--threshold 15]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeMachine } from './machine.js';
import { textTable, type CaseResult, type ResultFile } from './report.js';

export const DEFAULT_THRESHOLD = 15;

export interface Comparison {
  text: string;
  /** cases slower than the baseline by more than the threshold */
  regressions: string[];
}

export function readResults(path: string): ResultFile {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read bench results ${path}: ${(e as Error).message}`);
  }
  const f = data as ResultFile;
  if (!f || f.schema !== 1 || !Array.isArray(f.cases)) throw new Error(`${path} is not a bench result file (schema 1)`);
  return f;
}

const key = (c: CaseResult) => `${c.name} [${c.engine}]`;

/** Plain file reads, reads from the disk and the native C decoder measure the machine, not the code:
 *  shown, never a regression. */
const informational = (c: CaseResult) => c.engine.startsWith('read-only') || c.engine.endsWith(' cold') || c.engine === 'native';

export function compareResults(base: ResultFile, current: ResultFile, thresholdPct = DEFAULT_THRESHOLD): Comparison {
  const baseBy = new Map(base.cases.map((c) => [key(c), c]));
  // per-call fixed costs weigh differently on 4 MiB and 32 MiB fixtures: only like with like gives verdicts
  const comparable = base.settings.fixtureBytes === current.settings.fixtureBytes;
  const rows: string[][] = [];
  const regressions: string[] = [];
  for (const c of current.cases) {
    const b = baseBy.get(key(c));
    if (!b) {
      rows.push([c.name, c.engine, '-', c.mbPerS.toFixed(1), '', 'new']);
      continue;
    }
    const change = (100 * (c.mbPerS - b.mbPerS)) / b.mbPerS;
    let verdict = 'ok';
    if (informational(c)) verdict = 'info';
    else if (!comparable && c.group !== 'scale') verdict = 'n/c';
    else if (change < -thresholdPct) {
      verdict = `SLOWER (> ${thresholdPct} %)`;
      regressions.push(`${key(c)}: ${b.mbPerS.toFixed(1)} → ${c.mbPerS.toFixed(1)} MB/s (${change.toFixed(1)} %)`);
    } else if (change > thresholdPct) verdict = 'faster';
    const rss = c.peakRssBytes !== undefined && b.peakRssBytes !== undefined
      ? `  (peak RSS ${(b.peakRssBytes / 2 ** 20).toFixed(0)} → ${(c.peakRssBytes / 2 ** 20).toFixed(0)} MiB)`
      : '';
    rows.push([c.name, c.engine, b.mbPerS.toFixed(1), c.mbPerS.toFixed(1), `${change >= 0 ? '+' : ''}${change.toFixed(1)} %`, verdict + rss]);
  }
  const notRun = base.cases.filter((b) => !current.cases.some((c) => key(c) === key(b))).length;
  const lines = [
    `baseline: ${base.date}${base.quick ? ' (quick)' : ''}, ${base.git.commit ?? 'unknown commit'}; ${describeMachine(base.machine)}`,
    `current:  ${current.date}${current.quick ? ' (quick)' : ''}, ${current.git.commit ?? 'unknown commit'}; ${describeMachine(current.machine)}`,
  ];
  if (base.machine.cpuModel !== current.machine.cpuModel || base.machine.cores !== current.machine.cores) {
    lines.push('warning: different CPU model or core count; the comparison says little');
  }
  if (!comparable) {
    lines.push(
      `warning: fixtures of ${base.settings.fixtureBytes / 2 ** 20} MiB in the baseline, ${current.settings.fixtureBytes / 2 ** 20} MiB now ` +
        `(${current.quick ? 'compare a --quick run with bench/baseline.quick.json' : 'compare a full run with bench/baseline.json'}); ` +
        'in-memory cases are shown but not judged (n/c)',
    );
  }
  lines.push('', textTable(['case', 'engine', 'base MB/s', 'now MB/s', 'change', 'verdict'], rows, 2, true));
  if (notRun) lines.push(`(${notRun} baseline entries not run this time)`);
  lines.push(
    '',
    regressions.length
      ? `${regressions.length} case(s) slower than the baseline by more than ${thresholdPct} %:\n  ${regressions.join('\n  ')}`
      : `no case is slower than the baseline by more than ${thresholdPct} %`,
  );
  return { text: lines.join('\n'), regressions };
}

// standalone use
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { threshold: { type: 'string' } } });
  if (positionals.length !== 2) {
    console.error('usage: node dist-bench/bench/compare.js BASELINE.json CURRENT.json [--threshold 15]');
    process.exit(2);
  }
  const threshold = values.threshold === undefined ? DEFAULT_THRESHOLD : Number(values.threshold);
  const c = compareResults(readResults(positionals[0]!), readResults(positionals[1]!), threshold);
  console.log(c.text);
  process.exit(c.regressions.length ? 1 : 0);
}
