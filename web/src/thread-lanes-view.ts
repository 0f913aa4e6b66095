// The per-thread lanes on a canvas: a lane per thread, grouped under a row per process, each interval of
// the library's threadStates coloured by state (Running, Ready, Waiting; unknown pale). It shows the time
// range of the CPU timeline (which zooms and pans both) and its selection; the wheel scrolls the lanes.
// Drawing touches only the lanes in view and, in each, the rows in the range (binary search), one rect per
// row except rows that fall in a device pixel already drawn; a million rows cost what is visible.
// Hovering shows the interval (state, wait reason, ready time, readying thread) and links a wake-up to the
// lane of the thread that readied it.
import { waitReasonName } from '../../src/index.js';
import { esc } from './format.js';
import { firstRowEndingAfter, NO_PRIORITY, NONE16, NONE8, ST_READY, ST_RUNNING, ST_WAITING, type ThreadLanesData } from './thread-lanes-data.js';
import { axisMs, drawRangeOverlay, niceStep } from './timeline-view.js';
import { FrameDraw, pixelRatio, sizeCanvas } from './canvas.js';

export interface ThreadLaneLabels {
  /** "chrome.exe (1234)" for a process id (-1: unknown) */
  processName(pid: number): string;
  threadName(tid: number, pid: number): string | null;
  /** 0xRRGGBB of a process id */
  color(pid: number): number;
  /** a time of the timeline as text since the trace start, a duration as text */
  time(t: number): string;
  duration(ticks: number): string;
  /** ticks per millisecond (null: ticks) and ticks from the trace start to the timeline's time 0 */
  ticksPerMs: number | null;
  offsetTicks: number;
}

const LABEL_W = 210;
const AXIS_H = 22;
const LANE_H = 16;
const MAX_H = 420;
/** state colours: unknown, running, ready, waiting */
const COLOURS = ['#e5e7eb', '#16a34a', '#f59e0b', '#bfdbfe'];
const STATE_NAMES = ['unknown', 'Running', 'Ready', 'Waiting'];
/** which state wins a shared pixel */
const PRIORITY = [0, 3, 2, 1];

export class ThreadLanesView {
  readonly canvas: HTMLCanvasElement;
  private readonly tip: HTMLDivElement;
  private readonly ctx: CanvasRenderingContext2D;
  /** what is drawn top to bottom: a lane index, or ~lane (negative) for the header of that lane's process */
  private items = new Int32Array(0);
  /** item of each thread id's first lane (for wake-up links) */
  private itemOfTid = new Map<number, number>();
  private scroll = 0;
  private t0 = 0;
  private t1 = 1;
  private sel: [number, number] | null = null;
  /** a wake-up to draw: [time, from item, to item] */
  private link: [number, number, number] | null = null;
  private readonly frames = new FrameDraw(() => this.draw(), () => this.canvas);
  private cssW = 0;
  private readonly resize: ResizeObserver;

  constructor(
    private readonly host: HTMLElement,
    readonly data: ThreadLanesData,
    private readonly labels: ThreadLaneLabels,
  ) {
    host.innerHTML = '';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'thread-canvas';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', `Thread states of ${data.laneTid.length} threads: running, ready, waiting. The wheel or Page Up/Down scroll the threads.`);
    this.tip = document.createElement('div');
    this.tip.className = 'tooltip';
    this.tip.hidden = true;
    host.append(this.canvas, this.tip);
    this.ctx = this.canvas.getContext('2d')!;
    this.filter(null);
    this.bind();
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(host);
  }

  /** Shows the threads `keep` says (per lane: 1 shown; null: all), under their processes. */
  filter(keep: Uint8Array | null): void {
    const d = this.data;
    const out: number[] = [];
    this.itemOfTid.clear();
    let lastPid = NaN;
    for (let l = 0; l < d.laneTid.length; l++) {
      if (keep && !keep[l]) continue;
      if (d.lanePid[l] !== lastPid) {
        out.push(~l);
        lastPid = d.lanePid[l]!;
      }
      if (!this.itemOfTid.has(d.laneTid[l]!)) this.itemOfTid.set(d.laneTid[l]!, out.length);
      out.push(l);
    }
    this.items = Int32Array.from(out);
    this.scroll = 0;
    this.link = null;
    this.schedule();
  }

  get shownLanes(): number {
    let n = 0;
    for (const k of this.items) if (k >= 0) n++;
    return n;
  }

  setRange(t0: number, t1: number): void {
    this.t0 = t0;
    this.t1 = Math.max(t1, t0 + 1e-9);
    this.schedule();
  }

  setSelection(range: [number, number] | null): void {
    this.sel = range;
    this.schedule();
  }

  private visibleItems(): number {
    return Math.floor((this.height() - AXIS_H) / LANE_H);
  }

  private height(): number {
    return Math.min(MAX_H, AXIS_H + Math.max(1, this.items.length) * LANE_H + 4);
  }

  private scrollTo(k: number): void {
    this.scroll = Math.max(0, Math.min(this.items.length - this.visibleItems(), Math.round(k)));
    this.link = null;
    this.tip.hidden = true;
    this.schedule();
  }

  private bind(): void {
    const c = this.canvas;
    c.addEventListener(
      'wheel',
      (e) => {
        if (this.items.length <= this.visibleItems()) return;
        e.preventDefault();
        const dy = e.deltaMode === 1 ? e.deltaY * LANE_H : e.deltaY;
        this.scrollTo(this.scroll + Math.sign(dy) * Math.max(1, Math.round(Math.abs(dy) / LANE_H)));
      },
      { passive: false },
    );
    c.addEventListener('keydown', (e) => {
      const page = this.visibleItems() - 1;
      if (e.key === 'PageDown' || e.key === 'ArrowDown') this.scrollTo(this.scroll + (e.key === 'PageDown' ? page : 1));
      else if (e.key === 'PageUp' || e.key === 'ArrowUp') this.scrollTo(this.scroll - (e.key === 'PageUp' ? page : 1));
      else return;
      e.preventDefault();
    });
    c.addEventListener('pointermove', (e) => this.hover(e.offsetX, e.offsetY));
    c.addEventListener('pointerleave', () => {
      this.tip.hidden = true;
      if (this.link) {
        this.link = null;
        this.schedule();
      }
    });
  }

  private schedule(): void {
    this.frames.request();
  }

  private plotWidth(): number {
    return Math.max(10, this.cssW - LABEL_W);
  }

  /** The row of lane `l` at CSS x (within 2 px), or -1. */
  private rowAt(l: number, x: number): number {
    const d = this.data;
    const tpp = (this.t1 - this.t0) / this.plotWidth();
    const t = this.t0 + (x - LABEL_W) * tpp;
    const i = firstRowEndingAfter(d, d.laneFirst[l]!, d.laneFirst[l + 1]!, t - 2 * tpp);
    return i < d.laneFirst[l + 1]! && d.start[i]! <= t + 2 * tpp ? i : -1;
  }

  private hover(x: number, y: number): void {
    const k = this.scroll + Math.floor((y - AXIS_H) / LANE_H);
    const l = y >= AXIS_H && k < this.items.length ? this.items[k]! : -1;
    const i = l >= 0 && x >= LABEL_W ? this.rowAt(l, x) : -1;
    const link = this.link;
    this.link = null;
    if (i < 0) {
      this.tip.hidden = true;
      if (link) this.schedule();
      return;
    }
    const d = this.data;
    const L = this.labels;
    const tid = d.laneTid[l]!;
    const pid = d.lanePid[l]!;
    const st = d.state[i]!;
    const name = L.threadName(tid, pid);
    const rows: [string, string][] = [
      ['process', L.processName(pid)],
      ['state', `${STATE_NAMES[st]}${st === ST_WAITING && d.waitReason[i] !== NONE8 ? ` (${waitReasonName(d.waitReason[i]!) ?? d.waitReason[i]})` : ''}`],
      ['from', `${L.time(d.start[i]!)} → ${L.time(d.end[i]!)}`],
      ['for', L.duration(d.end[i]! - d.start[i]!)],
    ];
    if (d.cpu[i] !== NONE16) rows.push(['CPU', String(d.cpu[i])]);
    if (d.priority[i] !== NO_PRIORITY) rows.push(['priority', String(d.priority[i])]);
    // the ready interval of this wake-up: this row if ready, the one before it if running
    const r = st === ST_READY ? i : st === ST_RUNNING && i > d.laneFirst[l]! && d.state[i - 1] === ST_READY ? i - 1 : -1;
    if (r >= 0 && r !== i) rows.push(['ready time', L.duration(d.end[r]! - d.start[r]!)]);
    if (r >= 0 && d.readyingKnown[r]) {
      const by = d.readying[r]!;
      const from = this.itemOfTid.get(by);
      const byLane = from === undefined ? -1 : this.items[from]!;
      const byName = byLane >= 0 ? L.threadName(by, d.lanePid[byLane]!) : null;
      rows.push(['readied by', `thread ${by}${byName ? ` · ${byName}` : ''}${byLane >= 0 ? ` (${L.processName(d.lanePid[byLane]!)})` : ''}`]);
      if (from !== undefined) this.link = [d.start[r]!, from, k];
    }
    this.tip.innerHTML = `<div class="tip-title"><span class="chip" style="background:${COLOURS[st]}"></span>thread ${tid}${name ? ` · ${esc(name)}` : ''}</div><dl>${rows.map(([a, b]) => `<dt>${a}</dt><dd>${esc(b)}</dd>`).join('')}</dl>`;
    this.tip.hidden = false;
    const tw = this.tip.offsetWidth;
    this.tip.style.left = `${Math.min(this.host.clientWidth - tw - 4, x + 14)}px`;
    this.tip.style.top = `${y + 16}px`;
    if (link || this.link) this.schedule();
  }

  private draw(): void {
    const d = this.data;
    this.cssW = Math.max(300, this.host.clientWidth);
    const cssH = this.height();
    const dpr = pixelRatio();
    const { W, H } = sizeCanvas(this.canvas, this.cssW, cssH, dpr);
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, this.cssW, cssH);
    const pw = this.plotWidth();
    const span = this.t1 - this.t0;
    const pxT = span / (pw * dpr); // ticks per device pixel
    const visible = Math.min(this.visibleItems(), this.items.length - this.scroll);
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    ctx.textBaseline = 'middle';
    for (let v = 0; v < visible; v++) {
      const item = this.items[this.scroll + v]!;
      const y = AXIS_H + v * LANE_H;
      if (item < 0) {
        // a process: its name across the row
        const pid = d.lanePid[~item]!;
        ctx.fillStyle = '#f3f4f6';
        ctx.fillRect(0, y, this.cssW, LANE_H);
        ctx.fillStyle = `#${this.labels.color(pid).toString(16).padStart(6, '0')}`;
        ctx.fillRect(4, y + 4, 8, 8);
        ctx.fillStyle = '#111827';
        ctx.textAlign = 'left';
        ctx.font = '600 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
        ctx.fillText(this.labels.processName(pid), 16, y + LANE_H / 2);
        ctx.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
        continue;
      }
      const tid = d.laneTid[item]!;
      const name = this.labels.threadName(tid, d.lanePid[item]!);
      ctx.fillStyle = '#4b5563';
      ctx.textAlign = 'left';
      ctx.fillText(clip(ctx, `${tid}${name ? ' ' + name : ''}`, LABEL_W - 24), 16, y + LANE_H / 2);
      // the rows in range; a row inside a device pixel already drawn is drawn only if its state ranks higher
      const end = d.laneFirst[item + 1]!;
      let lastEnd = -1;
      let lastPri = -1;
      let fill = -1;
      for (let i = firstRowEndingAfter(d, d.laneFirst[item]!, end, this.t0); i < end; i++) {
        const s = d.start[i]!;
        if (s >= this.t1) break;
        const px = Math.floor((Math.max(s, this.t0) - this.t0) / pxT);
        const pxEnd = Math.max(px + 1, Math.ceil((Math.min(d.end[i]!, this.t1) - this.t0) / pxT));
        const st = d.state[i]!;
        const pri = PRIORITY[st]!;
        if (pxEnd <= lastEnd && pri <= lastPri) continue;
        if (st !== fill) {
          ctx.fillStyle = COLOURS[st]!;
          fill = st;
        }
        // a pixel a higher state already took keeps it
        const from = px < lastEnd && pri <= lastPri ? lastEnd : px;
        ctx.fillRect(LABEL_W + from / dpr, y + 2, (pxEnd - from) / dpr, LANE_H - 4);
        if (pxEnd > lastEnd) {
          lastEnd = pxEnd;
          lastPri = pri;
        } else lastPri = Math.max(lastPri, pri);
      }
    }
    this.axis(ctx, pw);
    const bottom = AXIS_H + visible * LANE_H;
    if (this.sel) drawRangeOverlay(ctx, this.sel[0], this.sel[1], this.t0, this.t1, LABEL_W, pw, AXIS_H, bottom, this.labels.duration(this.sel[1] - this.sel[0]));
    if (this.link) this.drawLink(ctx, pw);
    if (this.items.length > visible) {
      // where the view is in the list
      const h = bottom - AXIS_H;
      ctx.fillStyle = 'rgba(17,24,39,0.25)';
      ctx.fillRect(this.cssW - 4, AXIS_H + (this.scroll / this.items.length) * h, 3, Math.max(8, (visible / this.items.length) * h));
    }
  }

  /** The wake-up under the pointer: an arrow from the readying thread's lane to the readied one, at the ready time. */
  private drawLink(ctx: CanvasRenderingContext2D, pw: number): void {
    const [t, from, to] = this.link!;
    const x = LABEL_W + ((t - this.t0) / (this.t1 - this.t0)) * pw;
    if (x < LABEL_W || x > LABEL_W + pw) return;
    const yOf = (k: number) => AXIS_H + (Math.max(-0.5, Math.min(this.visibleItems() - 0.5, k - this.scroll)) + 0.5) * LANE_H;
    const y0 = yOf(from);
    const y1 = yOf(to);
    ctx.strokeStyle = '#dc2626';
    ctx.fillStyle = '#dc2626';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(x, y0, 3, 0, 2 * Math.PI);
    ctx.fill();
    ctx.beginPath();
    ctx.moveTo(x, y0);
    ctx.lineTo(x, y1);
    ctx.stroke();
    const dir = y1 > y0 ? 1 : -1;
    ctx.beginPath();
    ctx.moveTo(x, y1);
    ctx.lineTo(x - 4, y1 - 6 * dir);
    ctx.lineTo(x + 4, y1 - 6 * dir);
    ctx.closePath();
    ctx.fill();
  }

  private axis(ctx: CanvasRenderingContext2D, pw: number): void {
    const L = this.labels;
    const unit = L.ticksPerMs ?? 1;
    const spanUnits = (this.t1 - this.t0) / unit;
    const step = niceStep(spanUnits / Math.max(2, pw / 110));
    const startUnits = (this.t0 + L.offsetTicks) / unit;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, this.cssW, AXIS_H);
    ctx.fillStyle = '#374151';
    ctx.strokeStyle = '#9ca3af';
    ctx.lineWidth = 1;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    for (let v = Math.ceil(startUnits / step) * step; v <= startUnits + spanUnits + 1e-9; v += step) {
      const x = Math.round(LABEL_W + ((v - startUnits) / spanUnits) * pw) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, AXIS_H - 5);
      ctx.lineTo(x, AXIS_H);
      ctx.stroke();
      ctx.fillText(L.ticksPerMs ? axisMs(v, step) : String(Math.round(v)), Math.min(Math.max(x, LABEL_W + 24), LABEL_W + pw - 24), AXIS_H - 8);
    }
    ctx.textAlign = 'left';
    ctx.fillStyle = '#6b7280';
    ctx.fillText('thread', 16, AXIS_H - 8);
  }
}

/** `text` cut with an ellipsis to `width` CSS pixels. */
function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let n = text.length;
  while (n > 1 && ctx.measureText(text.slice(0, n) + '…').width > width) n--;
  return text.slice(0, n) + '…';
}
