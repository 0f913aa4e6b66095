// The page: pick, drop or open the sample trace; decode it in a Web Worker (progress, cancel); show the
// trace, the per-CPU timeline, CPU usage, spin-lock contention, events by kind and diagnostics; download
// tables. A range shift-dragged on the timeline is the library's selection (resolveSelection, in the
// decoding worker, which stays alive for it): the CPU usage and spin-lock tables are recomputed for it and
// the downloads keep only it; the search box filters the CPU tables and highlights the timeline. The thread
// lanes (threadStates, computed on demand in that worker) follow the timeline's range and the search, and
// so does the flame graph — of the sampled CPU (built in that worker from the samples and their stacks) or of
// the wait time (the blocked time by the stack where threads waited and the readying thread's stack).
// No framework, no network: the worker's code is part of this script (started from a Blob URL, which works
// from file:// too) and the sample is a script (sample.js) loaded on demand.
import { COUNTERS, selectionText, type CpuAnalysis, type KindRow, type ProcessCpu, type SpinlockAnalysis, type SpinlockStats, type ThreadCpu } from '../../src/index.js';
import { bytes, esc, fileTime, hex, int, ms, msCell, percent } from './format.js';
import { EXPORT_TABLES, FORMATS, rangeSuffix, type ExportFormat, type ExportTable } from './export-formats.js';
import type { FlameOf, FromWorker, PageRange, PageResult, ToWorker } from './protocol.js';
import { renderTable, type Column } from './table-view.js';
import { processMatches } from './search.js';
import { TimelineView } from './timeline-view.js';
import { ThreadLanesView } from './thread-lanes-view.js';
import type { ThreadLanesData } from './thread-lanes-data.js';
import { FlameView } from './flame-view.js';
import type { FlameData } from './flame-data.js';

declare const __WORKER_SOURCE__: string;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

// ------------------------------------------------------------------------------------------------
// workers

let workerUrl: string | null = null;
function newWorker(): Worker {
  workerUrl ??= URL.createObjectURL(new Blob([__WORKER_SOURCE__], { type: 'text/javascript' }));
  return new Worker(workerUrl);
}

/** A script next to the page that sets a global (sample.js, export-worker.js): works from file:// too. */
function loadScript<T>(src: string, value: () => T | undefined): Promise<T> {
  const ready = value();
  if (ready !== undefined) return Promise.resolve(ready);
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = src;
    s.onload = () => resolve(value()!);
    s.onerror = () => reject(new Error(`${src} could not be loaded (is it next to index.html?)`));
    document.head.append(s);
  });
}

let exportUrl: string | null = null;
/** The download worker (its code is loaded on first use). */
async function newExportWorker(): Promise<Worker> {
  if (!exportUrl) {
    const source = await loadScript('export-worker.js', () => window.ETW_DECODE_EXPORT_WORKER);
    exportUrl = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  }
  return new Worker(exportUrl);
}

/** the worker decoding a trace (null once its result is in) */
let decoding: Worker | null = null;
/** the worker of the trace shown: it decoded it, and recomputes the tables for a selected range */
let pageWorker: Worker | null = null;
/** the download being written (of the trace shown) */
let exporting: Worker | null = null;
let current: { file: Blob; name: string; result: PageResult | null } | null = null;
/** the selected time range (null: the whole trace), and the number of the last recomputation asked for */
let range: PageRange | null = null;
let selectSeq = 0;
/** the number of the last flame graph asked for, and what it weighs (the choice stays for the next trace) */
let flameSeq = 0;
let flameOf: FlameOf = 'samples';

function show(which: 'drop' | 'progress' | 'result' | 'error-only'): void {
  $('drop').hidden = which !== 'drop' && which !== 'error-only';
  $('progress').hidden = which !== 'progress';
  $('result').hidden = which !== 'result';
  if (which !== 'error-only') $('error').hidden = true;
}

function showError(title: string, text: string, kind: 'error' | 'info' = 'error'): void {
  $('error').className = `alert ${kind}`;
  $('error-title').textContent = title;
  $('error-text').textContent = text;
  $('error').hidden = false;
}

function setProgress(phase: string, done: number, total: number): void {
  // framing reads the buffer headers (the first part), decoding the rest
  const f = total > 0 ? done / total : 0;
  const pct = Math.round(100 * (phase === 'frame' ? 0.1 * f : 0.1 + 0.9 * f));
  $('progress-fill').style.width = `${pct}%`;
  $('progress-bar').setAttribute('aria-valuenow', String(pct));
  $('progress-text').textContent = `${phase === 'frame' ? 'reading buffer headers' : 'decoding'} — ${bytes(done)} of ${bytes(total)} (${pct} %)`;
}

/** Decodes `file` in a fresh worker (a decode in progress is cancelled). */
function open(file: Blob, name: string): void {
  pageWorker?.terminate();
  exporting?.terminate();
  exporting = null;
  range = null;
  selectSeq++;
  flameSeq++;
  $('dl-status').textContent = '';
  current = { file, name, result: null };
  show('progress');
  $('progress-file').textContent = name;
  setProgress('frame', 0, file.size);
  const w = newWorker();
  decoding = w;
  pageWorker = w;
  w.onmessage = (ev: MessageEvent<FromWorker>) => {
    const m = ev.data;
    if (m.type === 'progress') setProgress(m.phase, m.done, m.total);
    else if (m.type === 'result') {
      decoding = null; // kept as pageWorker, for selections
      current!.result = m.result;
      show('result');
      render(m.result);
    } else if (m.type === 'threads') {
      if (current?.result) showThreads(current.result, m.lanes);
    } else if (m.type === 'error' && m.for === 'threads') {
      threadsPending = false;
      $('threads-note').textContent = `The thread lanes could not be computed: ${m.message}`;
      const again = document.getElementById('threads-show') as HTMLButtonElement | null;
      if (again) again.disabled = false;
    } else if (m.type === 'flame') {
      if (m.seq === flameSeq && m.of === flameOf && current?.result) showFlame(current.result, m.flame);
    } else if (m.type === 'error' && m.for === 'flame') {
      $('flame').classList.remove('busy');
      $('flame-note').textContent = `The flame graph could not be computed: ${m.message}`;
    } else if (m.type === 'selected') {
      if (m.seq === selectSeq && current?.result) showAnalysis(current.result, m.cpu, m.spin);
    } else if (m.type === 'error' && m.for === 'select') {
      // a recomputation for a range failed: the trace stays shown
      $('cpu-note').textContent = `The selection could not be applied: ${m.message}`;
      for (const id of ['cpu-table', 'spin-table']) $(id).classList.remove('busy');
    } else if (m.type === 'error') {
      w.terminate();
      decoding = null;
      pageWorker = null;
      show('error-only');
      const notEtl = m.code === 'NOT_ETL' || m.code === 'EMPTY';
      showError(notEtl ? `${name} is not an ETL trace` : `${name} could not be decoded`, m.message);
    }
  };
  w.onerror = (e) => {
    decoding = null;
    pageWorker = null;
    show('error-only');
    showError(`${name} could not be decoded`, `the decoder stopped: ${e.message}`);
  };
  w.postMessage({ type: 'decode', file, name } satisfies ToWorker);
}

function cancel(): void {
  decoding?.terminate();
  decoding = null;
  pageWorker = null;
  show('drop');
  showError('Decoding cancelled', `${current?.name ?? 'The trace'} was not decoded. Open it again, or another trace.`, 'info');
}

// ------------------------------------------------------------------------------------------------
// the sample trace: sample.js sets a global with its bytes (base64), so it loads from file:// too

declare global {
  interface Window {
    ETW_DECODE_SAMPLE?: string;
    ETW_DECODE_EXPORT_WORKER?: string;
  }
}

async function loadSample(): Promise<Uint8Array<ArrayBuffer>> {
  const bin = atob(await loadScript('sample.js', () => window.ETW_DECODE_SAMPLE));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function openSample(): Promise<void> {
  try {
    open(new File([await loadSample()], 'sample.etl'), 'sample.etl');
  } catch (e) {
    showError('The sample could not be opened', (e as Error).message);
  }
}

// ------------------------------------------------------------------------------------------------
// rendering

const PALETTE = [0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0x2f4b7c, 0xd45087, 0x8cd17d, 0x665191, 0xffa600, 0x499894, 0xe17c05];

/** A colour per process index: the palette by CPU rank, then hues spread by the golden angle. */
function processColours(r: PageResult): (proc: number) => number {
  const rank = new Map<number | null, number>();
  r.cpu.processes.forEach((p, i) => rank.set(p.processId, i));
  const cache = new Map<number, number>();
  return (proc) => {
    let c = cache.get(proc);
    if (c !== undefined) return c;
    const k = rank.get(r.timeline.pids[proc] ?? null) ?? 1000 + proc;
    c = k < PALETTE.length ? PALETTE[k]! : hsl(((k * 137.508) % 360) / 360, 0.45, 0.58);
    cache.set(proc, c);
    return c;
  };
}

function hsl(h: number, s: number, l: number): number {
  const f = (n: number) => {
    const k = (n + h * 12) % 12;
    const a = s * Math.min(l, 1 - l);
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return (f(0) << 16) | (f(8) << 8) | f(4);
}

/** the idle process (not drawn: idle time is blank) */
const NO_CHIP = '<span class="chip none" title="not drawn"></span>';
const chip = (c: number) => `<span class="chip" style="background:#${c.toString(16).padStart(6, '0')}"></span>`;

function card(label: string, value: string, sub = '', testId = ''): string {
  return `<div class="card"${testId ? ` data-testid="${testId}"` : ''}><div class="label">${esc(label)}</div><div class="value">${esc(value)}</div>${sub ? `<div class="sub">${esc(sub)}</div>` : ''}</div>`;
}

function notice(kind: 'warn' | 'info' | 'error', title: string, text: string, testId: string): string {
  return `<div class="alert ${kind}" data-testid="${testId}"><strong>${esc(title)}</strong><p>${esc(text)}</p></div>`;
}

function render(r: PageResult): void {
  const s = r.summary;
  const t = s.trace;
  const tpms = r.ticksPerSecond ? r.ticksPerSecond / 1000 : null;
  $('summary-file').textContent = `· ${r.fileName}`;
  $('summary-decode').textContent = `decoded in ${ms(r.decodeMs)} · ${bytes(s.fileSize)}`;

  // the trace
  const durationMs =
    t && t.endTime > t.startTime ? Number(t.endTime - t.startTime) / 10_000 : tpms && r.switchSpanTicks > 0 ? r.switchSpanTicks / tpms : null;
  const cards = [
    card('Windows', t ? `${t.osVersion}` : 'unknown', t ? `build ${t.build} · ${t.pointerSize * 8}-bit` : 'no logfile header', 'windows'),
    card('CPUs', t ? String(t.numberOfProcessors) : '–', `${r.timeline.lanes.length} with context switches`, 'cpus'),
    card('Clock', t ? t.clockName : '–', t ? (t.clockType === 1 ? `${int(t.perfFreq)} Hz` : t.clockType === 3 ? `${int(t.cpuSpeedInMHz)} MHz` : '100 ns') : '', 'clock'),
    card('Duration', ms(durationMs), t ? `from ${fileTime(t.startTime)}` : '', 'duration'),
    card('Events', int(s.events), `${int(s.buffers)} buffers · ${int(s.eventsByKind.length)} kinds`, 'events'),
    card('Context switches', int(s.cswitch), `${int(s.compact.batches)} compact batches · ${int(s.readythread)} ready events`, 'cswitch'),
    card('Spin-lock rows', int(s.spinlock), `${int(r.spin.totals.contended)} contended`, 'spinlock'),
    card('Threads · processes', `${int(s.threads)} · ${int(s.processes)}`, 'lifetimes from Thread/Process events', 'lifetimes'),
  ];
  $('cards').innerHTML = cards.join('');

  const notes: string[] = [];
  if (r.noSwitches) notes.push(notice('warn', 'No context switches in this trace', `${r.noSwitches}. The timeline and CPU usage need the CSWITCH kernel flag (xperf -on PROC_THREAD+CSWITCH, or WPR's CPU profile).`, 'no-switches'));
  if (r.dataLoss) notes.push(notice('warn', 'Data was lost or is corrupt', `${r.dataLoss}. What could be decoded is shown; see Diagnostics for where.`, 'data-loss'));
  if (r.lateEvents) notes.push(notice('info', 'Out-of-order events', `${int(r.lateEvents)} events arrived behind the CPU-usage reorder window: their rows may miss ready times or process ids.`, 'late'));
  if (r.unresolvedRows) notes.push(notice('info', 'Threads named late', `${int(r.unresolvedRows)} switch-ins were counted before their thread's process was known (more were waiting than the CPU-usage hold keeps): they may count as (unknown).`, 'unresolved'));
  $('notices').innerHTML = notes.join('');

  cpuBy = 'process';
  spinByLock = true;
  search = '';
  $<HTMLInputElement>('search').value = '';
  renderTimeline(r, tpms);
  renderThreadsPanel(r);
  renderFlamePanel(r);
  renderSelection(r);
  showAnalysis(r, r.cpu, r.spin);
  renderKinds(s.eventsByKind);
  renderDiagnostics(r);
  renderDownloads(r);
}

let flameView: FlameView | null = null;
let flameTimer: ReturnType<typeof setTimeout> | null = null;

const FLAME_HINT: Record<FlameOf, string> = {
  samples:
    "The <code>samples</code> (SampledProfile) of the selection and the search: a row per process, then their stacks from the outermost frame down to the instruction pointer, as wide as their CPU time. Frames are <code>module!0xoffset</code> (no symbols). Hover for a frame's samples and share; click to zoom into it, <kbd>Home</kbd> or Reset zooms out.",
  waits:
    "The blocked time of the selection's switch-ins — from a thread's switch-out to the ReadyThread that readied it — as PerfView's Thread Time with ReadyThread: a row per process of the waiting threads, the stack where they waited (outermost frame first), then <span class=\"chip\" style=\"background:#86efac\"></span>READIED BY the thread that woke them and its stack, in cool colours; widths are blocked time. Frames are <code>module!0xoffset</code> (no symbols). Hover for a frame's waits and time; click to zoom into it, <kbd>Home</kbd> or Reset zooms out.",
};

/** Why the flame graph of `of` is empty for this trace (no samples; no switches or no stacks), or null. */
function flameEmpty(r: PageResult, of: FlameOf): string | null {
  if (of === 'samples')
    return r.noSamples
      ? `No SampledProfile events in this trace (${r.noSamples.replace(/^no samples rows: /, '')}): the flame graph needs the kernel's sampled profile (xperf -on PROC_THREAD+LOADER+PROFILE, with -stackwalk Profile for stacks, or WPR's CPU profile).`
      : null;
  if (r.noSwitches) return `No context switches in this trace (${r.noSwitches.replace(/^no cswitch rows: /, '')}): the wait time needs the CSWITCH and DISPATCHER kernel flags (xperf -on PROC_THREAD+LOADER+CSWITCH+DISPATCHER -stackwalk CSwitch+ReadyThread).`;
  if (r.noStacks)
    return `No stacks in this trace (${r.noStacks}): its context switches and ReadyThread events were recorded without stack walking. The flame graph of the wait time needs their stacks — where threads waited and who woke them (xperf -on PROC_THREAD+LOADER+CSWITCH+DISPATCHER -stackwalk CSwitch+ReadyThread, or WPR's CPU profile). The CPU usage table above has the waits by process and thread.`;
  return null;
}

/** The flame graph panel of a new trace: the choice of what it weighs, and its graph for the whole trace. */
function renderFlamePanel(r: PageResult): void {
  $('flame-reset').onclick = () => flameView?.zoom(0);
  tabs(['tab-flame-samples', 'tab-flame-waits'], flameOf === 'samples' ? 0 : 1, (i) => {
    flameOf = i === 0 ? 'samples' : 'waits';
    renderFlame(r);
  });
  renderFlame(r);
}

/** The flame graph of the current choice: the reason when it is empty for this trace, else asked for the selection. */
function renderFlame(r: PageResult): void {
  flameView?.destroy();
  flameView = null;
  $('flame-focus').textContent = '';
  $('flame-note').textContent = '';
  $<HTMLButtonElement>('flame-reset').disabled = true;
  $('flame-hint').innerHTML = FLAME_HINT[flameOf];
  $('flame').classList.remove('busy');
  const empty = flameEmpty(r, flameOf);
  if (empty) {
    flameSeq++; // an answer still on its way is not shown
    $('flame').innerHTML = `<p class="muted" data-testid="flame-empty">${esc(empty)}</p>`;
    return;
  }
  $('flame').innerHTML = `<p class="muted">computing the flame graph${flameOf === 'waits' ? ' of the wait time (the first time, the trace is decoded again, whole, for its switches and stacks)' : ''}…</p>`;
  requestFlame();
}

/** Asks the worker for the flame graph of the selected range and the search (none when it is empty for this trace). */
function requestFlame(): void {
  flameTimer = null;
  const r = current?.result;
  if (!r || !pageWorker || flameEmpty(r, flameOf)) return;
  $('flame').classList.add('busy');
  pageWorker.postMessage({ type: 'flame', seq: ++flameSeq, of: flameOf, range, search } satisfies ToWorker);
}

function showFlame(r: PageResult, d: FlameData | null): void {
  $('flame').classList.remove('busy');
  flameView?.destroy();
  flameView = null;
  $<HTMLButtonElement>('flame-reset').disabled = true;
  $('flame-focus').textContent = '';
  const where = range ? 'In the selected range: ' : '';
  const q = search ? ` (search “${search}”)` : '';
  const waits = flameOf === 'waits';
  if (!d || d.nodes === 0) {
    const what = waits ? 'wait' : 'sample';
    $('flame').innerHTML = `<p class="muted" data-testid="flame-none">${!d ? (waits ? 'No context switches in this trace.' : 'No SampledProfile events in this trace.') : search ? `No ${what} matches the search.` : `No ${what}s in the selected range.`}</p>`;
    $('flame-note').textContent = '';
    return;
  }
  const n = d.samples[0]!;
  $('flame-note').textContent = waits
    ? `${where}${int(n)} waits, ${d.timed ? ms(d.time[0]! / 10_000) : `${int(d.weight[0]!)} ticks`} blocked${q}; ${int(d.stacked)} with the stack where the thread waited, ${int(d.readyStacked)} with the readying thread's stack. ` +
      (d.timed ? 'Widths are blocked time.' : "The trace's clock does not convert: widths are ticks.")
    : `${where}${int(n)} samples${d.weight[0] !== n ? ` (Count ${int(d.weight[0]!)})` : ''}${d.timed ? `, ${ms(d.time[0]! / 10_000)} of CPU` : ''}${q}; ${int(d.stacked)} with a stack. ` +
      (d.timed ? 'Widths are CPU time (Count × the profile interval).' : 'The trace states no profile interval: widths are samples (their Count).');
  flameView = new FlameView($('flame'), d);
  flameView.focusListener = (k) => {
    $<HTMLButtonElement>('flame-reset').disabled = k === 0;
    $('flame-focus').textContent = k === 0 ? '' : `zoomed into ${flameView!.label(k)}`;
  };
}

let timeline: TimelineView | null = null;
let threadView: ThreadLanesView | null = null;
let threadsPending = false;
/** the timeline's shown range (its ticks), for the thread lanes */
let shownRange: [number, number] = [0, 1];

/** The thread lanes panel of a new trace: a button computing them (a whole decode: only when asked). */
function renderThreadsPanel(r: PageResult): void {
  threadView = null;
  threadsPending = false;
  $('threads-panel').hidden = r.timeline.entries === 0;
  $('threads-note').textContent = '';
  $('threads').innerHTML = `<p><button type="button" class="button" id="threads-show">Show thread lanes</button> <span class="muted small">decodes the trace again, whole (its rows in memory), for the library's threadStates</span></p>`;
  $('threads-show').onclick = () => {
    if (!pageWorker || threadsPending) return;
    threadsPending = true;
    $<HTMLButtonElement>('threads-show').disabled = true;
    $('threads-note').textContent = 'computing the thread states…';
    pageWorker.postMessage({ type: 'threads' } satisfies ToWorker);
  };
}

function showThreads(r: PageResult, lanes: ThreadLanesData): void {
  threadsPending = false;
  if (!timeline) return;
  const tl = timeline;
  const colour = processColours(r);
  const procIndex = new Map(r.timeline.pids.map((p, i) => [p, i]));
  const image = new Map(r.processNames);
  const names = new Map(r.threadNames.map((x) => [`${x.threadId}/${x.processId}`, x.name]));
  threadView = new ThreadLanesView($('threads'), lanes, {
    processName: (pid) => (pid < 0 ? 'unknown process' : `${image.get(pid) ?? (pid === 0 ? 'Idle' : 'pid')} (${pid})`),
    threadName: (tid, pid) => names.get(`${tid}/${pid < 0 ? null : pid}`) ?? null,
    color: (pid) => (procIndex.has(pid) ? colour(procIndex.get(pid)!) : 0x9ca3af),
    time: (t) => tl.time(t),
    duration: (t) => tl.duration(t),
    ticksPerMs: r.ticksPerSecond ? r.ticksPerSecond / 1000 : null,
    offsetTicks: timelineOffset(r),
  });
  threadView.setRange(shownRange[0], shownRange[1]);
  renderSelection(r);
  applySearch(r);
}

/** ticks from the trace start to the timeline's time 0 */
const timelineOffset = (r: PageResult) => Number(r.timeline.baseTicks - r.startTicks);

/**
 * A range of the timeline (its ticks) as the library's time specs: nanoseconds since the trace start,
 * to the microsecond (what `--from`/`--to` take), or raw ticks when the clock does not convert.
 */
function rangeOf(r: PageResult, a: number, b: number): PageRange {
  const off = timelineOffset(r);
  if (r.ticksPerSecond) {
    const us = (t: number) => Math.max(0, Math.round(((t + off) / r.ticksPerSecond!) * 1e6));
    const from = us(a);
    const to = Math.max(from + 1, us(b));
    return { from: { ns: BigInt(from) * 1000n }, to: { ns: BigInt(to) * 1000n } };
  }
  const tick = (t: number) => r.startTicks + BigInt(Math.round(t + off));
  const from = tick(a);
  const to = tick(b);
  return { from: { ticks: from }, to: { ticks: to > from ? to : from + 1n } };
}

/** A range's bounds in ticks since the trace start (for drawing and its text). */
function rangeTicks(r: PageResult, x: PageRange): [number, number] {
  const at = (t: PageRange['from']) =>
    typeof t === 'object' && 'ns' in t ? (Number(t.ns) / 1e9) * r.ticksPerSecond! : typeof t === 'object' && 'ticks' in t ? Number(t.ticks - r.startTicks) : 0;
  return [at(x.from), at(x.to)];
}

/** Selects a range of the timeline (its ticks), or the whole trace (null): the tables are recomputed for it. */
function selectRange(a: number | null, b = 0): void {
  const r = current?.result;
  if (!r || !pageWorker) return;
  range = a === null ? null : rangeOf(r, a, b);
  const seq = ++selectSeq;
  renderSelection(r);
  requestFlame();
  if (!range) {
    showAnalysis(r, r.cpu, r.spin);
    return;
  }
  for (const id of ['cpu-table', 'spin-table']) $(id).classList.add('busy');
  $('cpu-note').textContent = 'recomputing for the selected range…';
  pageWorker.postMessage({ type: 'select', seq, range } satisfies ToWorker);
}

/** The selection bar (bounds, duration, clear button; its bounds as data attributes) and the timeline's overlay. */
function renderSelection(r: PageResult): void {
  const bar = $('selection');
  const tpms = r.ticksPerSecond ? r.ticksPerSecond / 1000 : null;
  const clear = $<HTMLButtonElement>('selection-clear');
  bar.classList.toggle('active', range !== null);
  downloadsNote(r);
  clear.disabled = range === null;
  if (!range) {
    $('selection-text').textContent = 'Whole trace';
    delete bar.dataset.from;
    delete bar.dataset.to;
    timeline?.setSelection(null);
    threadView?.setSelection(null);
    return;
  }
  const [a, b] = rangeTicks(r, range);
  const spec = (t: PageRange['from']) => (typeof t === 'object' && 'ns' in t ? `${t.ns}ns` : typeof t === 'object' && 'ticks' in t ? `${t.ticks}t` : String(t));
  bar.dataset.from = spec(range.from);
  bar.dataset.to = spec(range.to);
  $('selection-text').textContent = tpms
    ? `Selected ${msCell(a / tpms)} – ${msCell(b / tpms)} ms (${ms((b - a) / tpms)})`
    : `Selected ticks ${int(Math.round(a))} – ${int(Math.round(b))} (${int(Math.round(b - a))} ticks)`;
  const off = timelineOffset(r);
  timeline?.setSelection([a - off, b - off]);
  threadView?.setSelection([a - off, b - off]);
}

/** The CPU usage and spin-lock tables, of the whole trace or of the selected range. */
function showAnalysis(r: PageResult, cpu: CpuAnalysis, spin: SpinlockAnalysis): void {
  for (const id of ['cpu-table', 'spin-table']) $(id).classList.remove('busy');
  shownCpu = cpu;
  renderCpu(r, cpu);
  renderSpin(r, spin);
}

/** The search box's text (lower case, trimmed) */
let search = '';
let shownCpu: CpuAnalysis | null = null;

/** The thread lanes the search keeps (a thread by its id or name, or its process), and the note saying so. */
function filterThreads(r: PageResult): void {
  if (!threadView) return;
  const d = threadView.data;
  const lanes = d.laneTid.length;
  let keep: Uint8Array | null = null;
  if (search !== '') {
    const image = new Map(r.processNames);
    const names = new Map(r.threadNames.map((x) => [`${x.threadId}/${x.processId}`, x.name]));
    keep = new Uint8Array(lanes);
    for (let l = 0; l < lanes; l++) {
      const tid = d.laneTid[l]!;
      const pid = d.lanePid[l]!;
      const name = names.get(`${tid}/${pid < 0 ? null : pid}`);
      if (processMatches(search, pid < 0 ? null : pid, pid < 0 ? null : (image.get(pid) ?? null)) || String(tid) === search || (name !== undefined && name.toLowerCase().includes(search))) keep[l] = 1;
    }
  }
  threadView.filter(keep);
  $('threads-note').textContent = `${keep ? `${int(threadView.shownLanes)} of ` : ''}${int(lanes)} threads, ${int(d.rows)} state intervals${keep ? ` (search “${search}”)` : ''}.`;
}

/** Applies the search: the CPU tables filtered, the matching processes and threads highlighted on the timeline. */
function applySearch(r: PageResult): void {
  if (shownCpu) renderCpu(r, shownCpu);
  filterThreads(r);
  if (!timeline) return;
  if (search === '') {
    timeline.highlightSet(null, null);
    return;
  }
  const image = new Map(r.processNames);
  const procs = new Uint8Array(r.timeline.pids.length);
  r.timeline.pids.forEach((pid, i) => {
    if (pid !== null && processMatches(search, pid, image.get(pid) ?? null)) procs[i] = 1;
  });
  const threads = new Set<number>();
  if (/^\d+$/.test(search)) threads.add(Number(search));
  for (const t of r.threadNames) if (t.name.toLowerCase().includes(search)) threads.add(t.threadId);
  timeline.highlightSet(procs, threads);
  for (const o of $('legend').querySelectorAll('button')) o.setAttribute('aria-pressed', 'false');
}

function renderTimeline(r: PageResult, tpms: number | null): void {
  const colour = processColours(r);
  const image = new Map(r.processNames);
  const threadName = new Map(r.threadNames.map((x) => [`${x.threadId}/${x.processId}`, x.name]));
  const procName = (proc: number) => {
    const pid = r.timeline.pids[proc];
    if (pid === null || pid === undefined) return 'unknown process';
    return `${image.get(pid) ?? 'pid'} (${pid})`;
  };
  const panel = $('timeline-panel');
  if (r.timeline.entries === 0) {
    $('timeline').innerHTML = `<p class="muted">No thread ran on any CPU in the decoded data${r.noSwitches ? ' (no context switches)' : ''}.</p>`;
    $('legend').innerHTML = '';
    $('timeline-note').textContent = '';
    panel.querySelector('.toolbar')!.setAttribute('hidden', '');
    $('timeline-hint').hidden = true;
    timeline = null;
    return;
  }
  panel.querySelector('.toolbar')!.removeAttribute('hidden');
  $('timeline-hint').hidden = false;
  timeline = new TimelineView($('timeline'), r.timeline, {
    processName: procName,
    threadName: (tid, proc) => threadName.get(`${tid}/${r.timeline.pids[proc]}`) ?? null,
    color: colour,
    ticksPerMs: tpms,
    offsetTicks: Number(r.timeline.baseTicks - r.startTicks),
  });
  timeline.selectListener = (a, b) => selectRange(a, b);
  timeline.rangeListener = (a, b) => {
    const off = timelineOffset(r);
    shownRange = [a - off, b - off];
    threadView?.setRange(a - off, b - off);
    $('timeline-range').textContent = tpms ? `${ms(a / tpms)} – ${ms(b / tpms)} (${ms((b - a) / tpms)} shown)` : `${int(Math.round(a))} – ${int(Math.round(b))} ticks`;
  };
  // legend: processes by CPU time (their colour), clickable to highlight
  const procIndex = new Map(r.timeline.pids.map((p, i) => [p, i]));
  const top = r.cpu.processes.filter((p) => procIndex.has(p.processId) && p.processId !== 0).slice(0, 14);
  $('legend').innerHTML = top
    .map((p) => {
      const i = procIndex.get(p.processId)!;
      return `<button type="button" data-proc="${i}" aria-pressed="false">${chip(colour(i))}${esc(procName(i))}</button>`;
    })
    .join('');
  for (const b of $('legend').querySelectorAll<HTMLButtonElement>('button')) {
    b.addEventListener('click', () => {
      const on = b.getAttribute('aria-pressed') !== 'true';
      for (const o of $('legend').querySelectorAll('button')) o.setAttribute('aria-pressed', 'false');
      b.setAttribute('aria-pressed', String(on));
      timeline?.highlight(on ? Number(b.dataset.proc) : null);
    });
  }
  const tl = r.timeline;
  $('timeline-note').textContent = tl.bucket
    ? `${int(tl.switches)} switches: past ${int(1 << 21)} entries the timeline is kept coalesced (entries starting in the same ${timeline.duration(tl.bucket)} of a CPU are merged, the longest named); the tables are exact.`
    : `${int(tl.switches)} switches, every one drawn (${int(tl.entries)} of them ran a thread other than idle).`;
}

type CpuRow = ProcessCpu | ThreadCpu;
let cpuView: () => CpuRow[] = () => [];
let cpuBy: 'process' | 'thread' = 'process';

function renderCpu(r: PageResult, cpu: CpuAnalysis): void {
  const tot = Number(cpu.total.cpuTicks);
  const clock = cpu.ticksPerSecond !== null;
  const q = search;
  const processes = q ? cpu.processes.filter((x) => processMatches(q, x.processId, x.imageFileName)) : cpu.processes;
  const threads = q
    ? cpu.threads.filter((x) => processMatches(q, x.processId, x.imageFileName) || String(x.threadId) === q || (x.name !== null && x.name.toLowerCase().includes(q)))
    : cpu.threads;
  const where = cpu.selection ? `${selectionText(cpu.selection).replace(/^selection: /, 'In the selected range, ')}: ` : '';
  const matched = q ? ` Search “${q}”: ${int(processes.length)} of ${int(cpu.processes.length)} processes, ${int(threads.length)} of ${int(cpu.threads.length)} threads.` : '';
  $('cpu-note').textContent =
    where +
    (clock
      ? `CPU time ${ms(cpu.total.cpuMs)} in ${int(cpu.total.switchIns)} switch-ins; ready = waiting for a CPU, waits = blocked before being readied.`
      : 'This trace’s clock does not convert: times are in ticks.') +
    matched;
  const colour = processColours(r);
  const procIndex = new Map(r.timeline.pids.map((p, i) => [p, i]));
  const image = (x: CpuRow) => x.imageFileName ?? (x.processId === 0 ? 'Idle' : '–');
  const time = (v: number | null, ticks: bigint) => (clock ? msCell(v) : int(ticks));
  const unit = clock ? ' (ms)' : ' (ticks)';
  const common: Column<CpuRow>[] = [
    { key: 'cpu', label: `CPU${unit}`, numeric: true, text: (x) => time(x.cpuMs, x.cpuTicks), sort: (x) => x.cpuTicks },
    { key: 'pct', label: '% of CPU time', numeric: true, text: (x) => percent(Number(x.cpuTicks), tot), sort: (x) => x.cpuTicks },
    { key: 'switchIns', label: 'switch-ins', numeric: true, text: (x) => int(x.switchIns), sort: (x) => x.switchIns },
    { key: 'ready', label: `ready${unit}`, title: 'time ready to run, waiting for a CPU', numeric: true, text: (x) => time(x.readyMs, x.readyTicks), sort: (x) => x.readyTicks },
    { key: 'waits', label: `waits${unit}`, title: 'time blocked before being readied', numeric: true, text: (x) => time(x.waitMs, x.waitTicks), sort: (x) => x.waitTicks },
    {
      key: 'readyP99',
      label: `ready p99${unit}`,
      title: '99th percentile of one wait for a CPU (within 1 %); `etw-decode cpu --json` has p50, p90, p99 and max of ready and waits',
      numeric: true,
      text: (x) => (x.readyPercentiles?.p99Ticks == null ? '–' : time(x.readyPercentiles.p99Ms, x.readyPercentiles.p99Ticks)),
      sort: (x) => x.readyPercentiles?.p99Ticks ?? null,
    },
  ];
  const draw = () => {
    const host = $('cpu-table');
    if (cpuBy === 'process') {
      cpuView = renderTable<CpuRow>(host, {
        caption: 'CPU usage by process',
        testId: 'cpu-process',
        sortKey: 'cpu',
        rows: processes,
        empty: q ? 'no process matches the search' : cpu.selection ? 'no switch-ins in the selected range' : 'no context switches decoded',
        columns: [
          { key: 'image', label: 'process', text: image, sort: image, prefix: (x) => (procIndex.has(x.processId) ? chip(colour(procIndex.get(x.processId)!)) : NO_CHIP) },
          { key: 'pid', label: 'pid', numeric: true, text: (x) => (x.processId === null ? '–' : String(x.processId)), sort: (x) => x.processId },
          { key: 'threads', label: 'threads', numeric: true, text: (x) => int((x as ProcessCpu).threads), sort: (x) => (x as ProcessCpu).threads },
          ...common,
        ],
      });
    } else {
      cpuView = renderTable<CpuRow>(host, {
        caption: 'CPU usage by thread',
        testId: 'cpu-thread',
        sortKey: 'cpu',
        rows: threads,
        empty: q ? 'no thread matches the search' : cpu.selection ? 'no switch-ins in the selected range' : 'no context switches decoded',
        columns: [
          { key: 'tid', label: 'tid', numeric: true, text: (x) => String((x as ThreadCpu).threadId), sort: (x) => (x as ThreadCpu).threadId },
          { key: 'name', label: 'thread', text: (x) => (x as ThreadCpu).name ?? '', sort: (x) => (x as ThreadCpu).name ?? '' },
          { key: 'image', label: 'process', text: image, sort: image, prefix: (x) => (procIndex.has(x.processId) ? chip(colour(procIndex.get(x.processId)!)) : NO_CHIP) },
          { key: 'pid', label: 'pid', numeric: true, text: (x) => (x.processId === null ? '–' : String(x.processId)), sort: (x) => x.processId },
          ...common,
        ],
      });
    }
  };
  tabs(['tab-process', 'tab-thread'], cpuBy === 'process' ? 0 : 1, (i) => {
    cpuBy = i === 0 ? 'process' : 'thread';
    draw();
  });
  draw();
}

/** Wires a pair of tab buttons (arrow keys move between them). */
function tabs(ids: string[], initial: number, onSelect: (i: number) => void): void {
  const buttons = ids.map((id) => $<HTMLButtonElement>(id));
  const select = (i: number) => {
    buttons.forEach((b, k) => {
      b.setAttribute('aria-selected', String(k === i));
      b.tabIndex = k === i ? 0 : -1;
    });
    onSelect(i);
  };
  buttons.forEach((b, i) => {
    b.onclick = () => select(i);
    b.onkeydown = (e) => {
      if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        const j = (i + (e.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length;
        buttons[j]!.focus();
        select(j);
        e.preventDefault();
      }
    };
    b.setAttribute('aria-selected', String(i === initial));
    b.tabIndex = i === initial ? 0 : -1;
  });
}

let spinByLock = true;

function renderSpin(r: PageResult, sp: SpinlockAnalysis): void {
  const ns = sp.cpuSpeedInMHz !== null;
  const where = range ? 'In the selected range: ' : '';
  $('spin-note').textContent = r.noSpinlocks
    ? `${r.noSpinlocks}.`
    : `${where}${int(sp.totals.rows)} released spin locks, ${int(sp.totals.contended)} contended (${percent(sp.totals.contended, sp.totals.rows)}), ${int(sp.totals.locks)} locks, ${int(sp.totals.callers)} callers${ns ? '' : '; CpuSpeedInMHz unknown: cycles only'}.`;
  const nsText = (v: bigint | null) => (v === null ? '–' : int(v));
  const columns = (what: string): Column<SpinlockStats>[] => [
    { key: 'address', label: what, text: (x) => hex(x.address), sort: (x) => x.address },
    { key: 'count', label: 'count', numeric: true, text: (x) => int(x.count), sort: (x) => x.count },
    { key: 'contended', label: 'contended', numeric: true, text: (x) => int(x.contended), sort: (x) => x.contended },
    { key: 'spins', label: 'spins', numeric: true, text: (x) => int(x.spinCountSum), sort: (x) => x.spinCountSum },
    ns
      ? { key: 'wait', label: 'wait (ns)', numeric: true, text: (x) => nsText(x.waitNsSum), sort: (x) => x.waitTimeInCyclesSum }
      : { key: 'wait', label: 'wait (cycles)', numeric: true, text: (x) => int(x.waitTimeInCyclesSum), sort: (x) => x.waitTimeInCyclesSum },
    ns
      ? { key: 'hold', label: 'hold (ns)', numeric: true, text: (x) => nsText(x.holdNsSum), sort: (x) => x.holdCyclesSum }
      : { key: 'hold', label: 'hold (cycles)', numeric: true, text: (x) => int(x.holdCyclesSum), sort: (x) => x.holdCyclesSum },
  ];
  const draw = (byLock: boolean) =>
    renderTable<SpinlockStats>($('spin-table'), {
      caption: byLock ? 'Spin locks by lock address' : 'Spin locks by caller address',
      testId: byLock ? 'spin-lock' : 'spin-caller',
      sortKey: 'contended',
      rows: byLock ? sp.byLock : sp.byCaller,
      empty: r.noSpinlocks ? 'no spin-lock events in this trace' : range ? 'no spin locks released in the selected range' : 'nothing to show',
      columns: columns(byLock ? 'lock' : 'caller'),
    });
  tabs(['tab-lock', 'tab-caller'], spinByLock ? 0 : 1, (i) => draw((spinByLock = i === 0)));
  draw(spinByLock);
}

function kindText(k: KindRow): string {
  if (k.hookId !== undefined) return `${hex(k.hookId).replace(/^0x0{4}/, '0x')}${k.name ? ' ' + k.name : ''}`;
  if (k.provider !== undefined) return `${k.provider} ${k.eventId !== undefined ? 'id ' + k.eventId : 'type ' + k.eventType}`;
  if (k.messageNumber !== undefined) return `message ${k.messageNumber}`;
  return '';
}

function renderKinds(kinds: KindRow[]): void {
  renderTable<KindRow>($('kinds-table'), {
    caption: 'Events by kind',
    testId: 'kinds',
    sortKey: 'count',
    rows: kinds,
    limit: 25,
    columns: [
      { key: 'kind', label: 'kind', text: kindText, sort: kindText },
      { key: 'header', label: 'header', text: (k) => k.headerType, sort: (k) => k.headerType },
      { key: 'version', label: 'v', numeric: true, text: (k) => String(k.version), sort: (k) => k.version },
      { key: 'count', label: 'events', numeric: true, text: (k) => int(k.count), sort: (k) => k.count },
      { key: 'bytes', label: 'bytes', numeric: true, text: (k) => int(k.bytes), sort: (k) => k.bytes },
    ],
  });
}

function renderDiagnostics(r: PageResult): void {
  const d = r.summary.diagnostics;
  const order = { error: 0, dataLoss: 1, info: 2 } as const;
  const set = COUNTERS.filter((c) => (d[c.name] ?? 0) !== 0).sort((a, b) => order[a.severity] - order[b.severity]);
  const problems = set.filter((c) => c.severity !== 'info');
  const infos = set.filter((c) => c.severity === 'info');
  const item = (c: (typeof COUNTERS)[number]) =>
    `<li data-counter="${c.name}"><span><span class="badge ${c.severity}">${c.severity === 'dataLoss' ? 'data loss' : c.severity}</span></span><span class="num">${int(d[c.name] ?? 0)}</span><span><span class="name">${esc(c.name)}</span><br><span class="desc">${esc(c.description)}</span></span></li>`;
  const issues = r.summary.issues;
  $('diagnostics').innerHTML =
    (problems.length
      ? `<ul class="diag-list" data-testid="problems">${problems.map(item).join('')}</ul>`
      : `<p data-testid="no-problems"><span class="badge ok">ok</span> No lost, corrupt or undecoded data.</p>`) +
    (issues.length
      ? `<details${problems.length ? ' open' : ''}><summary>${int(issues.length)} issue${issues.length === 1 ? '' : 's'} with their file offsets</summary><div class="table-scroll"><table><thead><tr><th>offset</th><th>counter</th><th>what</th></tr></thead><tbody>${issues
          .slice(0, 200)
          .map((i) => `<tr><td class="mono">${esc(i.at)}</td><td>${esc(i.counter)}</td><td>${esc(i.message)}</td></tr>`)
          .join('')}</tbody></table></div></details>`
      : '') +
    (infos.length ? `<details><summary>${infos.length} informational counters</summary><ul class="diag-list">${infos.map(item).join('')}</ul></details>` : '');
}

// ------------------------------------------------------------------------------------------------
// downloads

function save(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function renderDownloads(r: PageResult): void {
  const sel = $<HTMLSelectElement>('dl-table');
  const counts: Record<string, number> = r.summary as unknown as Record<string, number>;
  // the summary does not count the tables derived from the whole trace (stacks, stackFrames)
  sel.innerHTML = EXPORT_TABLES.map((t) => `<option value="${t}">${t}${counts[t] === undefined ? '' : ` (${int(counts[t])} rows)`}</option>`).join('');
  const button = (f: (typeof FORMATS)[number]) =>
    `<button type="button" class="button" data-format="${f.id}" title="${esc(f.note)}"${f.available ? '' : ' disabled'}>${esc(f.label)}</button>`;
  $('dl-buttons').innerHTML = FORMATS.filter((f) => f.id !== 'perfetto').map(button).join('');
  const perfetto = FORMATS.find((f) => f.id === 'perfetto')!;
  $('dl-trace').innerHTML = `${button(perfetto)}<span class="muted small" id="dl-trace-note"></span>`;
  downloadsNote(r);
  for (const b of document.querySelectorAll<HTMLButtonElement>('#dl-buttons button, #dl-trace button')) {
    b.onclick = () => void exportRun(sel.value as ExportTable, b.dataset.format as ExportFormat);
  }
  $('dl-view').onclick = () => {
    const rows = cpuView();
    const head =
      cpuBy === 'process'
        ? ['processId', 'imageFileName', 'threads', 'switchIns', 'cpuTicks', 'readyTicks', 'waitTicks', 'cpuMs', 'readyMs', 'waitMs']
        : ['threadId', 'name', 'processId', 'imageFileName', 'switchIns', 'cpuTicks', 'readyTicks', 'waitTicks', 'cpuMs', 'readyMs', 'waitMs'];
    const cell = (v: unknown) => (v === null || v === undefined ? '' : /[",\n\r]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
    const text = [head.join(','), ...rows.map((x) => head.map((k) => cell((x as unknown as Record<string, unknown>)[k])).join(','))].join('\n') + '\n';
    save(new Blob([text], { type: 'text/csv' }), `${r.fileName.replace(/\.etl$/i, '')}${rangeSuffix(range)}.cpu-by-${cpuBy}.csv`);
  };
}

/** What the downloads keep: the whole trace or the selected range. */
function downloadsNote(r: PageResult): void {
  const note = $('dl-trace-note');
  if (!note) return;
  const tpms = r.ticksPerSecond ? r.ticksPerSecond / 1000 : null;
  if (!range) note.textContent = 'the whole trace, to open in ui.perfetto.dev';
  else {
    const [a, b] = rangeTicks(r, range);
    note.textContent = `the selected range (${tpms ? `${msCell(a / tpms)} – ${msCell(b / tpms)} ms` : `ticks ${int(Math.round(a))} – ${int(Math.round(b))}`}), to open in ui.perfetto.dev; tables keep their rows in it too`;
  }
}

async function exportRun(table: ExportTable, format: ExportFormat): Promise<void> {
  const trace = current;
  if (!trace) return;
  const sel = range;
  const status = $('dl-status');
  const buttons = [...document.querySelectorAll<HTMLButtonElement>('#dl-buttons button, #dl-trace button')];
  const label = FORMATS.find((f) => f.id === format)!.label;
  const what = (format === 'perfetto' ? 'the trace' : table) + (sel ? ' (selected range)' : '');
  status.textContent = `writing ${what} as ${label}…`;
  buttons.forEach((b) => (b.disabled = true));
  let w: Worker;
  try {
    w = await newExportWorker();
    if (current !== trace) {
      // another trace was opened meanwhile: this download is not wanted any more
      w.terminate();
      return;
    }
    exporting = w;
  } catch (e) {
    buttons.forEach((b) => (b.disabled = false));
    status.textContent = `could not write ${what}: ${(e as Error).message}`;
    return;
  }
  const done = () => {
    w.terminate();
    if (exporting === w) exporting = null;
    buttons.forEach((b) => (b.disabled = !FORMATS.find((f) => f.id === b.dataset.format)!.available));
  };
  w.onmessage = (ev: MessageEvent<FromWorker>) => {
    const m = ev.data;
    if (m.type === 'progress') status.textContent = `writing ${what} as ${label}… ${Math.round((100 * m.done) / Math.max(1, m.total))} %`;
    else if (m.type === 'exported') {
      done();
      save(m.blob, m.fileName);
      status.textContent = `${m.fileName}: ${int(m.rows)} rows, ${bytes(m.blob.size)}`;
    } else if (m.type === 'error') {
      done();
      status.textContent = `could not write ${what}: ${m.message}`;
    }
  };
  w.postMessage({ type: 'export', file: trace.file, name: trace.name, table, format, range: sel } satisfies ToWorker);
}

// ------------------------------------------------------------------------------------------------
// wiring

function init(): void {
  const input = $<HTMLInputElement>('file-input');
  input.addEventListener('change', () => {
    const f = input.files?.[0];
    if (f) open(f, f.name);
    input.value = '';
  });
  for (const id of ['open-file', 'open-file-2']) $(id).addEventListener('click', () => input.click());
  $('open-sample').addEventListener('click', () => void openSample());
  $('open-sample-2').addEventListener('click', () => void openSample());
  $('cancel').addEventListener('click', cancel);
  $('zoom-in').addEventListener('click', () => timeline?.zoom(1.6));
  $('zoom-out').addEventListener('click', () => timeline?.zoom(1 / 1.6));
  $('zoom-reset').addEventListener('click', () => timeline?.reset());
  const drop = $('drop');
  let depth = 0;
  window.addEventListener('dragenter', (e) => {
    e.preventDefault();
    depth++;
    drop.classList.add('over');
  });
  window.addEventListener('dragleave', () => {
    if (--depth <= 0) drop.classList.remove('over');
  });
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    drop.classList.remove('over');
    const f = e.dataTransfer?.files?.[0];
    if (f) open(f, f.name);
  });
  $('selection-clear').addEventListener('click', () => selectRange(null));
  const searchBox = $<HTMLInputElement>('search');
  searchBox.addEventListener('input', () => {
    search = searchBox.value.trim().toLowerCase();
    if (current?.result) applySearch(current.result);
    // the flame graph is rebuilt in the worker: once the typing pauses
    if (flameTimer) clearTimeout(flameTimer);
    flameTimer = setTimeout(requestFlame, 200);
  });
  window.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return;
    if (decoding) cancel();
    else if (e.target === searchBox) return; // the search box clears itself
    else if (range) selectRange(null);
  });
}

init();
