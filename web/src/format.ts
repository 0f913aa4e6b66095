// Number, size and time formatting for the page.
import { FILETIME_UNIX_EPOCH } from '../../src/time.js';

const nf = new Intl.NumberFormat('en-US');

export function int(n: number | bigint): string {
  return nf.format(n);
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)} ${units[u]}`;
}

/** A duration given in ms, with a unit that fits (µs below 1 ms, s above 10 s). */
export function ms(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a === 0) return '0 ms';
  if (a < 1) return `${(v * 1000).toFixed(a < 0.01 ? 2 : 1)} µs`;
  if (a < 10_000) return `${v.toFixed(a < 10 ? 3 : a < 100 ? 2 : 1)} ms`;
  return `${(v / 1000).toFixed(a < 100_000 ? 2 : 1)} s`;
}

const nf3 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 });

/** ms with 3 decimals (table cells: the columns line up) */
export function msCell(v: number | null): string {
  return v === null || !Number.isFinite(v) ? '–' : nf3.format(v);
}

export function percent(part: number, whole: number): string {
  if (!whole) return '–';
  const p = (100 * part) / whole;
  return `${p.toFixed(p < 10 ? 2 : 1)} %`;
}

/** FILETIME (100 ns since 1601) → ISO-like local-free text, or '–' */
export function fileTime(ft: bigint): string {
  if (ft <= 0n) return '–';
  const d = new Date(Number((ft - FILETIME_UNIX_EPOCH) / 10000n));
  return Number.isNaN(d.getTime()) ? '–' : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function hex(n: bigint | number): string {
  return '0x' + n.toString(16).padStart(n > 0xffffffff ? 16 : 8, '0');
}

/** HTML-escaped text */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
