// The per-CPU timeline on a canvas: one lane per CPU, a colour per process, idle left blank. Drawing
// costs one pass over the entries in view plus one over the pixels: each lane is rasterised into a row
// of device pixels (the entry covering most of a pixel gives its colour, the time covered its opacity),
// so a million switches zoomed out draw in milliseconds. Zoom with the wheel, +/- or double-click; pan by
// dragging or with the arrow keys; Home or 0 resets; hovering shows the switch under the pointer.
// Shift-drag selects a time range (drawn over the lanes with its bounds and duration; the page recomputes
// its tables for it); the processes or threads a search matched are drawn strongly, the others pale.
import { threadStateName, waitReasonName } from '../../src/index.js';
import { esc, int, ms, msCell } from './format.js';
import { firstEndingAfter, UNKNOWN, type Lane, type TimelineData } from './timeline-data.js';
import { FrameDraw, pixelRatio, sizeCanvas } from './canvas.js';

export interface TimelineLabels {
  /** "chrome.exe (1234)" for a process index */
  processName(proc: number): string;
  /** a thread's name, or null */
  threadName(tid: number, proc: number): string | null;
  /** 0xRRGGBB of a process index */
  color(proc: number): number;
  /** ticks per millisecond (null: the clock does not convert; times shown in ticks) */
  ticksPerMs: number | null;
  /** ticks from the trace start to the timeline's time 0 */
  offsetTicks: number;
}

const LABEL_W = 58;
const AXIS_H = 24;
const PAD_B = 6;

export class TimelineView {
  readonly canvas: HTMLCanvasElement;
  private readonly tip: HTMLDivElement;
  private readonly ctx: CanvasRenderingContext2D;
  private t0: number;
  private t1: number;
  private readonly minT: number;
  private readonly maxT: number;
  private laneH = 18;
  private cssW = 0;
  private dpr = 1;
  private readonly frames = new FrameDraw(() => this.draw(), () => this.canvas);
  /** per process index: 1 drawn strongly (null: every process) */
  private strong: Uint8Array | null = null;
  /** with `strong`: threads drawn strongly whatever their process */
  private strongThreads: ReadonlySet<number> | null = null;
  /** the selected range (timeline ticks), or null */
  private sel: [number, number] | null = null;
  private onRange: ((t0: number, t1: number) => void) | null = null;
  /** called with a range selected by shift-drag (timeline ticks), at the end of the drag */
  selectListener: ((t0: number, t1: number) => void) | null = null;
  private readonly resize: ResizeObserver;
  /** per process index: the ABGR pixel value, and its pale version (another process is highlighted) */
  private readonly pixel: Uint32Array;
  private readonly pale: Uint32Array;

  constructor(
    private readonly host: HTMLElement,
    private readonly data: TimelineData,
    private readonly labels: TimelineLabels,
  ) {
    this.minT = data.first;
    this.maxT = Math.max(data.last, data.first + 1);
    this.t0 = this.minT;
    this.t1 = this.maxT;
    host.innerHTML = '';
    this.canvas = document.createElement('canvas');
    this.canvas.tabIndex = 0;
    this.canvas.className = 'timeline-canvas';
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute(
      'aria-label',
      `Timeline of ${data.lanes.length} CPUs: which thread ran when. Keys: plus and minus zoom, left and right arrows pan, Home resets.`,
    );
    this.tip = document.createElement('div');
    this.tip.className = 'tooltip';
    this.tip.hidden = true;
    host.append(this.canvas, this.tip);
    this.ctx = this.canvas.getContext('2d')!;
    const n = data.pids.length;
    this.pixel = new Uint32Array(n);
    this.pale = new Uint32Array(n);
    for (let p = 0; p < n; p++) {
      const c = labels.color(p);
      const r = c >> 16;
      const g = (c >> 8) & 0xff;
      const b = c & 0xff;
      this.pixel[p] = abgr(r, g, b);
      this.pale[p] = abgr(mix(r, 0xe6, 0.8), mix(g, 0xe8, 0.8), mix(b, 0xec, 0.8));
    }
    this.bind();
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(host);
    this.schedule();
  }

  /** Called with the visible range (ticks since the trace start) after each change. */
  set rangeListener(f: (t0: number, t1: number) => void) {
    this.onRange = f;
    f(this.t0 + this.labels.offsetTicks, this.t1 + this.labels.offsetTicks);
  }

  /** Draws one process strongly and the others pale (null: all normal). */
  highlight(proc: number | null): void {
    if (proc === null) this.highlightSet(null, null);
    else {
      const m = new Uint8Array(this.data.pids.length);
      m[proc] = 1;
      this.highlightSet(m, null);
    }
  }

  /** Draws the processes of `procs` (1 per process index) and the threads of `threads` strongly, the others pale (null: all normal). */
  highlightSet(procs: Uint8Array | null, threads: ReadonlySet<number> | null): void {
    this.strong = procs;
    this.strongThreads = procs && threads && threads.size ? threads : null;
    this.schedule();
  }

  /** Shows the selected range [t0, t1) (timeline ticks), or none. */
  setSelection(range: [number, number] | null): void {
    this.sel = range;
    this.schedule();
  }

  /** A CSS x on the canvas as a time of the timeline, inside the trace. */
  private timeAt(x: number): number {
    const t = this.t0 + ((x - LABEL_W) / this.plotWidth()) * (this.t1 - this.t0);
    return Math.min(this.maxT, Math.max(this.minT, t));
  }

  zoom(factor: number, at = 0.5): void {
    const span = this.t1 - this.t0;
    const minSpan = Math.min(this.maxT - this.minT, Math.max(10, (this.maxT - this.minT) / 1e9));
    const next = Math.min(this.maxT - this.minT, Math.max(minSpan, span / factor));
    const pivot = this.t0 + at * span;
    this.setRange(pivot - at * next, pivot - at * next + next);
  }

  pan(fraction: number): void {
    const span = this.t1 - this.t0;
    this.setRange(this.t0 + fraction * span, this.t1 + fraction * span);
  }

  reset(): void {
    this.setRange(this.minT, this.maxT);
  }

  private setRange(a: number, b: number): void {
    const span = b - a;
    if (a < this.minT) [a, b] = [this.minT, this.minT + span];
    if (b > this.maxT) [a, b] = [Math.max(this.minT, this.maxT - span), this.maxT];
    this.t0 = a;
    this.t1 = b;
    this.onRange?.(a + this.labels.offsetTicks, b + this.labels.offsetTicks);
    this.schedule();
  }

  private schedule(): void {
    this.frames.request();
  }

  private plotWidth(): number {
    return Math.max(10, this.cssW - LABEL_W);
  }

  private bind(): void {
    const c = this.canvas;
    const fractionAt = (e: MouseEvent) => Math.min(1, Math.max(0, (e.offsetX - LABEL_W) / this.plotWidth()));
    c.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
        if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(dy)) this.pan((e.shiftKey ? dy : e.deltaX) / this.plotWidth());
        else this.zoom(Math.exp(-dy * 0.0015), fractionAt(e));
      },
      { passive: false },
    );
    let drag: { x: number; t0: number; t1: number; select: boolean } | null = null;
    c.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      drag = { x: e.offsetX, t0: this.t0, t1: this.t1, select: e.shiftKey };
      c.setPointerCapture(e.pointerId);
      c.classList.add(e.shiftKey ? 'selecting' : 'dragging');
    });
    c.addEventListener('pointerup', (e) => {
      const d = drag;
      drag = null;
      c.releasePointerCapture(e.pointerId);
      c.classList.remove('dragging', 'selecting');
      if (d?.select && Math.abs(e.offsetX - d.x) >= 3) {
        const a = this.timeAt(Math.min(d.x, e.offsetX));
        const b = this.timeAt(Math.max(d.x, e.offsetX));
        if (b > a) this.selectListener?.(a, b);
      }
    });
    c.addEventListener('pointermove', (e) => {
      if (drag?.select) {
        // the range being dragged, drawn as the selection until released
        const a = this.timeAt(Math.min(drag.x, e.offsetX));
        const b = this.timeAt(Math.max(drag.x, e.offsetX));
        this.setSelection(b > a ? [a, b] : null);
        this.tip.hidden = true;
        return;
      }
      if (drag) {
        const dt = ((e.offsetX - drag.x) / this.plotWidth()) * (drag.t1 - drag.t0);
        this.setRange(drag.t0 - dt, drag.t1 - dt);
        this.tip.hidden = true;
        return;
      }
      this.hover(e.offsetX, e.offsetY);
    });
    c.addEventListener('pointerleave', () => (this.tip.hidden = true));
    c.addEventListener('dblclick', (e) => this.zoom(e.shiftKey ? 0.5 : 2, fractionAt(e)));
    c.addEventListener('keydown', (e) => {
      const k = e.key;
      if (k === '+' || k === '=') this.zoom(1.6);
      else if (k === '-' || k === '_') this.zoom(1 / 1.6);
      else if (k === 'ArrowLeft') this.pan(-0.2);
      else if (k === 'ArrowRight') this.pan(0.2);
      else if (k === 'Home' || k === '0') this.reset();
      else return;
      e.preventDefault();
    });
  }

  /** The entry of `lane` at CSS x (within 3 px), or -1. */
  private entryAt(l: Lane, x: number): number {
    const tpp = (this.t1 - this.t0) / this.plotWidth();
    const t = this.t0 + (x - LABEL_W) * tpp;
    const slack = 3 * tpp;
    let i = firstEndingAfter(l, t - slack);
    let best = -1;
    let bestD = Infinity;
    for (; i < l.n && l.start[i]! <= t + slack; i++) {
      const d = t < l.start[i]! ? l.start[i]! - t : t > l.end[i]! ? t - l.end[i]! : 0;
      if (d < bestD) {
        bestD = d;
        best = i;
      }
      if (d === 0) break;
    }
    return best;
  }

  private hover(x: number, y: number): void {
    const lane = Math.floor((y - AXIS_H) / this.laneH);
    const l = this.data.lanes[lane];
    if (!l || x < LABEL_W) {
      this.tip.hidden = true;
      return;
    }
    const i = this.entryAt(l, x);
    if (i < 0) {
      this.tip.hidden = true;
      return;
    }
    const L = this.labels;
    const proc = l.proc[i]!;
    const tid = l.tid[i]!;
    const tname = L.threadName(tid, proc);
    const start = this.time(l.start[i]!);
    const end = this.time(l.end[i]!);
    const dur = this.duration(l.end[i]! - l.start[i]!);
    const merged = l.count && l.count[i]! > 1 ? l.count[i]! : 0;
    const st = l.outState[i]!;
    const wr = l.outWait[i]!;
    const state =
      st === UNKNOWN ? 'not known' : `${threadStateName(st) ?? st}${wr !== UNKNOWN && threadStateName(st) === 'Waiting' ? ` (${waitReasonName(wr) ?? wr})` : ''}`;
    const rows: [string, string][] = [
      ['process', L.processName(proc)],
      ['thread', `${tid}${tname ? ` · ${tname}` : ''}`],
      ['CPU', String(l.cpu)],
      ['ran', `${start} → ${end}`],
      [merged ? 'span' : 'for', dur],
    ];
    if (merged) rows.push(['switches', `${int(merged)} merged at this zoom-out resolution; the longest shown`]);
    else rows.push(['then', state]);
    this.tip.innerHTML = `<div class="tip-title"><span class="chip" style="background:#${L.color(proc).toString(16).padStart(6, '0')}"></span>${esc(L.processName(proc))}</div><dl>${rows
      .slice(1)
      .map(([k, v]) => `<dt>${k}</dt><dd>${esc(v)}</dd>`)
      .join('')}</dl>`;
    this.tip.hidden = false;
    const hostW = this.host.clientWidth;
    const tw = this.tip.offsetWidth;
    this.tip.style.left = `${Math.min(hostW - tw - 4, x + 14)}px`;
    this.tip.style.top = `${y + 16}px`;
  }

  /** A time of the timeline (ticks since its time 0) as text since the trace start, to the microsecond. */
  time(t: number): string {
    const L = this.labels;
    return L.ticksPerMs ? `${msCell((t + L.offsetTicks) / L.ticksPerMs)} ms` : `${int(Math.round(t + L.offsetTicks))} ticks`;
  }

  duration(ticks: number): string {
    const L = this.labels;
    return L.ticksPerMs ? ms(ticks / L.ticksPerMs) : `${int(Math.round(ticks))} ticks`;
  }

  private draw(): void {
    const started = performance.now();
    this.drawLanes();
    // for tests and the curious: how long the last frame took to draw
    this.canvas.dataset.drawMs = (performance.now() - started).toFixed(1);
  }

  private drawLanes(): void {
    const lanes = this.data.lanes;
    this.cssW = Math.max(200, this.host.clientWidth);
    this.laneH = lanes.length <= 8 ? 30 : lanes.length <= 16 ? 20 : lanes.length <= 32 ? 14 : lanes.length <= 64 ? 9 : 6;
    const cssH = AXIS_H + lanes.length * this.laneH + PAD_B;
    this.dpr = pixelRatio();
    const dpr = this.dpr;
    const { W, H } = sizeCanvas(this.canvas, this.cssW, cssH, dpr);
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, W, H);

    // lanes, rasterised
    const px0 = Math.round(LABEL_W * dpr);
    const pw = W - px0;
    const top = Math.round(AXIS_H * dpr);
    const lanePx = this.laneH * dpr;
    const ph = Math.max(1, Math.round(lanes.length * lanePx));
    const img = ctx.createImageData(pw, ph);
    const out = new Uint32Array(img.data.buffer);
    const cov = new Float32Array(pw);
    const sum = new Float32Array(pw);
    const best = new Uint32Array(pw);
    const tpp = (this.t1 - this.t0) / pw;
    const strong = this.strong;
    const strongThreads = this.strongThreads;
    const row = new Uint32Array(pw);
    for (let li = 0; li < lanes.length; li++) {
      const l = lanes[li]!;
      cov.fill(0);
      sum.fill(0);
      const bg = li % 2 ? abgr(0xf6, 0xf7, 0xf9) : abgr(0xee, 0xf0, 0xf3);
      const put = (p: number, c: number, v: number) => {
        sum[p]! += v;
        if (v > cov[p]!) {
          cov[p] = v;
          best[p] = c;
        }
      };
      for (let i = firstEndingAfter(l, this.t0); i < l.n; i++) {
        const s = l.start[i]!;
        if (s >= this.t1) break;
        const e = l.end[i]!;
        const p = l.proc[i]!;
        const color = strong === null || (p >= 0 && strong[p] === 1) || (strongThreads !== null && strongThreads.has(l.tid[i]!)) ? this.pixel[p]! : this.pale[p]!;
        const dens = l.count && l.count[i]! > 1 && e > s ? Math.min(1, l.busy![i]! / (e - s)) : 1;
        const x0 = Math.max(0, (s - this.t0) / tpp);
        const x1 = Math.min(pw, (e - this.t0) / tpp);
        if (x1 <= x0) {
          if (x0 < pw) put(Math.floor(x0), color, 0.02);
          continue;
        }
        const a = Math.floor(x0);
        const b = Math.min(pw - 1, Math.floor(x1));
        if (a === b) {
          put(a, color, (x1 - x0) * dens);
          continue;
        }
        put(a, color, (a + 1 - x0) * dens);
        for (let p2 = a + 1; p2 < b; p2++) put(p2, color, dens);
        if (x1 > b) put(b, color, (x1 - b) * dens);
      }
      const y0 = Math.round(li * lanePx);
      const y1 = Math.round((li + 1) * lanePx);
      // a 1-device-pixel gap between lanes
      for (let p = 0; p < pw; p++) {
        const s = sum[p]!;
        if (s <= 0) row[p] = bg;
        else {
          const alpha = Math.min(1, Math.max(0.4, s));
          row[p] = alpha >= 1 ? best[p]! : blend(bg, best[p]!, alpha);
        }
      }
      for (let y = y0; y < y1 - 1; y++) out.set(row, y * pw);
      out.fill(abgr(0xff, 0xff, 0xff), (y1 - 1) * pw, y1 * pw);
    }
    ctx.putImageData(img, px0, top);

    // labels and the time axis, in CSS pixels
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = '#4b5563';
    ctx.textAlign = 'right';
    const labelEvery = this.laneH >= 9 ? 1 : Math.ceil(9 / this.laneH);
    for (let li = 0; li < lanes.length; li += labelEvery) {
      ctx.fillText(`CPU ${lanes[li]!.cpu}`, LABEL_W - 8, AXIS_H + (li + 0.5) * this.laneH);
    }
    this.axis(ctx);
    this.selection(ctx);
  }

  /** The selected range over the lanes. */
  private selection(ctx: CanvasRenderingContext2D): void {
    if (!this.sel) return;
    const [a, b] = this.sel;
    drawRangeOverlay(ctx, a, b, this.t0, this.t1, LABEL_W, this.plotWidth(), AXIS_H, AXIS_H + this.data.lanes.length * this.laneH, this.duration(b - a));
  }

  private axis(ctx: CanvasRenderingContext2D): void {
    const L = this.labels;
    const pw = this.plotWidth();
    const span = this.t1 - this.t0;
    const unit = L.ticksPerMs ?? 1; // ticks per axis unit (ms, or ticks)
    const spanUnits = span / unit;
    const step = niceStep(spanUnits / Math.max(2, pw / 110));
    const startUnits = (this.t0 + L.offsetTicks) / unit;
    const first = Math.ceil(startUnits / step) * step;
    ctx.strokeStyle = '#d1d5db';
    ctx.lineWidth = 1;
    ctx.fillStyle = '#374151';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    const bottom = AXIS_H + this.data.lanes.length * this.laneH;
    ctx.beginPath();
    ctx.moveTo(LABEL_W, AXIS_H - 0.5);
    ctx.lineTo(LABEL_W + pw, AXIS_H - 0.5);
    ctx.stroke();
    for (let v = first; v <= startUnits + spanUnits + 1e-9; v += step) {
      const x = Math.round(LABEL_W + ((v - startUnits) / spanUnits) * pw) + 0.5;
      ctx.strokeStyle = '#9ca3af';
      ctx.beginPath();
      ctx.moveTo(x, AXIS_H - 6);
      ctx.lineTo(x, AXIS_H);
      ctx.stroke();
      ctx.strokeStyle = 'rgba(17,24,39,0.07)';
      ctx.beginPath();
      ctx.moveTo(x, AXIS_H);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      const text = L.ticksPerMs ? axisMs(v, step) : int(Math.round(v));
      ctx.fillText(text, Math.min(Math.max(x, LABEL_W + 24), LABEL_W + pw - 24), AXIS_H - 9);
    }
    ctx.textAlign = 'right';
    ctx.fillStyle = '#6b7280';
    ctx.fillText(L.ticksPerMs ? 'time' : 'ticks', LABEL_W - 8, AXIS_H - 9);
  }
}

/**
 * A selected range [a, b) (times of a view showing [t0, t1) over CSS x [left, left + pw), lanes from y
 * `top` to `bottom`): outside it shaded, its bounds as lines, `label` (its duration) above it. Shared by
 * the CPU lanes and the thread lanes.
 */
export function drawRangeOverlay(ctx: CanvasRenderingContext2D, a: number, b: number, t0: number, t1: number, left: number, pw: number, top: number, bottom: number, label: string): void {
  const xa = left + ((a - t0) / (t1 - t0)) * pw;
  const xb = left + ((b - t0) / (t1 - t0)) * pw;
  const l = Math.max(left, Math.min(left + pw, xa));
  const r = Math.max(left, Math.min(left + pw, xb));
  ctx.fillStyle = 'rgba(15,23,42,0.38)';
  if (l > left) ctx.fillRect(left, top, l - left, bottom - top);
  if (r < left + pw) ctx.fillRect(r, top, left + pw - r, bottom - top);
  ctx.strokeStyle = '#1d4ed8';
  ctx.lineWidth = 2;
  for (const x of [xa, xb]) {
    if (x < left || x > left + pw) continue;
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, bottom);
    ctx.stroke();
  }
  if (r > l) {
    ctx.font = '600 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    const w = ctx.measureText(label).width + 10;
    const cx = Math.min(Math.max((l + r) / 2, left + w / 2), left + pw - w / 2);
    ctx.fillStyle = '#1d4ed8';
    ctx.fillRect(cx - w / 2, top + 2, w, 15);
    ctx.fillStyle = '#ffffff';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(label, cx, top + 9.5);
  }
}

export function niceStep(raw: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-12))));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/** An axis label in ms, s or µs with the digits the step needs. */
export function axisMs(v: number, step: number): string {
  if (step >= 1000 || Math.abs(v) >= 1000) return `${(v / 1000).toFixed(Math.max(0, -Math.floor(Math.log10(step / 1000) + 1e-9)))} s`;
  if (step >= 1) return `${+v.toFixed(Math.max(0, -Math.floor(Math.log10(step))))} ms`;
  return `${+(v * 1000).toFixed(Math.max(0, -Math.floor(Math.log10(step * 1000))))} µs`;
}

function abgr(r: number, g: number, b: number): number {
  return ((0xff << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

function mix(a: number, b: number, t: number): number {
  return Math.round(a + (b - a) * t);
}

/** `fg` over `bg` (both ABGR) with opacity `a` */
function blend(bg: number, fg: number, a: number): number {
  return abgr(mix(bg & 0xff, fg & 0xff, a), mix((bg >> 8) & 0xff, (fg >> 8) & 0xff, a), mix((bg >> 16) & 0xff, (fg >> 16) & 0xff, a));
}
