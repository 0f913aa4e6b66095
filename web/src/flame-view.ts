// The flame graph on a canvas (root at the top, callees below), of the sampled CPU or of the wait time
// (flame-data.ts): a row per depth — the root, the processes, then the frames from the outermost down (to the
// instruction pointer; for waits, the stack where the thread waited, READIED BY, the readying thread's stack
// in cool colours) — each node as wide as its time (CPU or blocked; its samples or ticks when the trace gives
// no time). Drawing walks the pre-order arrays once; a node narrower than a device pixel is drawn as one,
// without its subtree. Hovering shows the frame, its samples or waits, share of the total and time; a click
// zooms into a node (its ancestors stay above it, full width), Home or the Reset button zooms out.
import { esc, int, ms, percent } from './format.js';
import { NAME_IN_IMAGE, NAME_NO_IMAGE, NAME_PROCESS, NAME_READIED, NAME_READYING, NAME_ROOT, type FlameData } from './flame-data.js';
import { FrameDraw, pixelRatio, sizeCanvas } from './canvas.js';

const ROW_H = 18;
const MAX_H = 560;
const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/**
 * A warm colour per module (a hash of its name) — cool for a readying thread's frames — grey for addresses in
 * no image, blue for processes, green for READIED BY.
 */
function colourOf(name: string, kind: number): string {
  if (kind === NAME_ROOT) return '#cbd5e1';
  if (kind === NAME_PROCESS) return '#93c5fd';
  if (kind === NAME_READIED) return '#86efac';
  const readying = (kind & NAME_READYING) !== 0;
  if ((kind & ~NAME_READYING) === NAME_NO_IMAGE) return readying ? '#c7d2fe' : '#d1d5db';
  const module = name.slice(0, name.lastIndexOf('!'));
  let h = 2166136261;
  for (let i = 0; i < module.length; i++) h = Math.imul(h ^ module.charCodeAt(i), 16777619);
  h >>>= 0;
  return `hsl(${(readying ? 175 : 0) + (h % 50)}, ${(readying ? 45 : 70) + ((h >>> 8) % 20)}%, ${(readying ? 62 : 58) + ((h >>> 16) % 14)}%)`;
}

export class FlameView {
  readonly canvas: HTMLCanvasElement;
  private readonly scroller: HTMLDivElement;
  private readonly tip: HTMLDivElement;
  private readonly ctx: CanvasRenderingContext2D;
  /** the node zoomed into (0: the root), and its ancestors */
  private focus = 0;
  private path: number[] = [];
  /** the deepest depth under the focus */
  private bottom: number;
  private readonly value: Float64Array;
  private readonly colours: (string | undefined)[] = [];
  private readonly frames = new FrameDraw(() => this.draw(), () => this.canvas);
  private cssW = 0;
  private readonly resize: ResizeObserver;
  /** told the node zoomed into (0: none) */
  focusListener: (node: number) => void = () => {};

  constructor(
    private readonly host: HTMLElement,
    readonly data: FlameData,
  ) {
    host.innerHTML = '';
    this.value = data.timed ? data.time : data.weight;
    this.bottom = data.maxDepth;
    this.scroller = document.createElement('div');
    this.scroller.className = 'flame-scroll';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'flame-canvas';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    const what = data.of === 'waits' ? `${data.samples[0]} waits (their blocked time) by process, the stack where the threads waited and the readying thread's stack` : `${data.samples[0]} samples by process and stack`;
    this.canvas.setAttribute('aria-label', `Flame graph of ${what}. Click a frame to zoom into it; Home zooms out.`);
    const c = this.canvas.dataset;
    c.samples = String(data.samples[0]);
    c.weight = String(data.weight[0]);
    c.time = String(data.time[0]);
    c.nodes = String(data.nodes);
    this.tip = document.createElement('div');
    this.tip.className = 'tooltip';
    this.tip.hidden = true;
    this.scroller.append(this.canvas);
    host.append(this.scroller, this.tip);
    this.ctx = this.canvas.getContext('2d')!;
    this.bind();
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(host);
    this.schedule();
  }

  /** Zooms into `node` (0: the whole tree). */
  zoom(node: number): void {
    const d = this.data;
    this.focus = node;
    this.path = [];
    // the ancestors: from the root, the child holding `node` at each depth
    for (let j = 0; j !== node; ) {
      this.path.push(j);
      let c = j + 1;
      while (d.end[c]! <= node) c = d.end[c]!;
      j = c;
    }
    this.bottom = 0;
    for (let k = node; k < d.end[node]!; k++) if (d.depth[k]! > this.bottom) this.bottom = d.depth[k]!;
    this.canvas.dataset.focus = node ? this.label(node) : '';
    this.tip.hidden = true;
    this.focusListener(node);
    this.schedule();
  }

  /** The name of node `k`. */
  label(k: number): string {
    return this.data.names[this.data.name[k]!]!;
  }

  destroy(): void {
    this.resize.disconnect();
    this.frames.cancel();
  }

  private bind(): void {
    const c = this.canvas;
    c.addEventListener('pointermove', (e) => this.hover(e.offsetX, e.offsetY));
    c.addEventListener('pointerleave', () => (this.tip.hidden = true));
    c.addEventListener('click', (e) => {
      const k = this.nodeAt(e.offsetX, e.offsetY);
      if (k >= 0) this.zoom(k);
    });
    c.addEventListener('keydown', (e) => {
      if (e.key !== 'Home') return;
      this.zoom(0);
      e.preventDefault();
    });
  }

  private schedule(): void {
    this.frames.request();
  }

  /** CSS x of value `v` in the zoomed view */
  private xOf(v: number): number {
    const d = this.data;
    const f = this.focus;
    return ((v - d.x[f]!) / Math.max(1e-300, this.value[f]!)) * this.cssW;
  }

  /** The node at CSS (x, y), or -1: an ancestor of the focus (full width), or in its subtree. */
  private nodeAt(x: number, y: number): number {
    const d = this.data;
    const depth = Math.floor(y / ROW_H);
    if (depth < 0 || x < 0 || x > this.cssW) return -1;
    if (depth < this.path.length) return this.path[depth]!;
    let k = this.focus;
    const v = d.x[k]! + (x / this.cssW) * this.value[k]!;
    while (d.depth[k]! - d.depth[this.focus]! + this.path.length < depth) {
      let c = k + 1;
      while (c < d.end[k]! && !(d.x[c]! <= v && v < d.x[c]! + this.value[c]!)) c = d.end[c]!;
      if (c >= d.end[k]!) return -1;
      k = c;
    }
    return k;
  }

  private hover(x: number, y: number): void {
    const k = this.nodeAt(x, y);
    if (k < 0) {
      this.tip.hidden = true;
      return;
    }
    const d = this.data;
    let kids = 0;
    for (let c = k + 1; c < d.end[k]!; c = d.end[c]!) kids += d.samples[c]!;
    const rows: [string, string][] = [];
    if (d.depth[k]! >= 2) {
      // the process: the depth-1 ancestor
      let p = 1;
      while (d.end[p]! <= k) p = d.end[p]!;
      rows.push([d.of === 'waits' ? 'waiting process' : 'process', this.label(p)]);
    }
    const waits = d.of === 'waits';
    if (waits) rows.push(['waits', int(d.samples[k]!)]);
    else {
      rows.push(['samples', `${int(d.samples[k]!)}${d.weight[k] !== d.samples[k] ? ` (Count ${int(d.weight[k]!)})` : ''}`]);
      if (kids < d.samples[k]! && d.depth[k]! >= 2) rows.push(['self', `${int(d.samples[k]! - kids)} (as the instruction pointer)`]);
    }
    rows.push(['of total', percent(this.value[k]!, this.value[0]!)]);
    if (this.focus !== 0) rows.push(['of zoom', percent(this.value[k]!, this.value[this.focus]!)]);
    if (waits) rows.push(['blocked', d.timed ? ms(d.time[k]! / 10_000) : `${int(d.weight[k]!)} ticks`]);
    else if (d.timed) rows.push(['CPU', ms(d.time[k]! / 10_000)]);
    const kind = d.nameKind[d.name[k]!]! & ~NAME_READYING;
    this.tip.innerHTML = `<div class="tip-title"><span class="chip" style="background:${this.colour(k)}"></span>${esc(this.label(k))}</div><dl>${rows.map(([a, b]) => `<dt>${a}</dt><dd>${esc(b)}</dd>`).join('')}</dl>${kind === NAME_IN_IMAGE || kind === NAME_NO_IMAGE || kind === NAME_READIED ? '<div class="muted small">click to zoom in</div>' : ''}`;
    this.tip.hidden = false;
    const tw = this.tip.offsetWidth;
    this.tip.style.left = `${Math.max(0, Math.min(this.host.clientWidth - tw - 4, x + 14))}px`;
    this.tip.style.top = `${y - this.scroller.scrollTop + 18}px`;
  }

  private colour(k: number): string {
    const n = this.data.name[k]!;
    return (this.colours[n] ??= colourOf(this.data.names[n]!, this.data.nameKind[n]!));
  }

  private draw(): void {
    const d = this.data;
    this.cssW = Math.max(300, this.scroller.clientWidth || this.host.clientWidth);
    const f = this.focus;
    const rows = this.path.length + this.bottom - d.depth[f]! + 1;
    const cssH = rows * ROW_H;
    this.scroller.style.maxHeight = `${MAX_H}px`;
    const dpr = pixelRatio();
    const { W, H } = sizeCanvas(this.canvas, this.cssW, cssH, dpr);
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, this.cssW, cssH);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    const box = (k: number, x0: number, x1: number, row: number, dim: boolean) => {
      const w = x1 - x0;
      const y = row * ROW_H;
      ctx.globalAlpha = dim ? 0.55 : 1;
      ctx.fillStyle = this.colour(k);
      ctx.fillRect(x0, y, Math.max(0.5, w - (w > 3 ? 1 : 0)), ROW_H - 1);
      ctx.globalAlpha = 1;
      if (w > 28) {
        ctx.fillStyle = '#111827';
        ctx.fillText(clip(ctx, this.label(k), w - 6), x0 + 3, y + ROW_H / 2);
      }
    };
    // the focus's ancestors, full width
    this.path.forEach((k, row) => box(k, 0, this.cssW, row, true));
    // the focus's subtree; a node narrower than a device pixel is a pixel of its colour (one per pixel and
    // row), without its subtree
    const base = this.path.length - d.depth[f]!;
    const minValue = (1 / (this.cssW * dpr)) * this.value[f]!;
    const lastPx = new Float64Array(rows).fill(-1);
    let drawn = 0;
    for (let k = f; k < d.end[f]!; ) {
      if (this.value[k]! < minValue) {
        const row = base + d.depth[k]!;
        const px = Math.floor(this.xOf(d.x[k]!) * dpr);
        if (px !== lastPx[row]) {
          lastPx[row] = px;
          ctx.fillStyle = this.colour(k);
          ctx.fillRect(px / dpr, row * ROW_H, 1 / dpr, ROW_H - 1);
          drawn++;
        }
        k = d.end[k]!;
        continue;
      }
      const x0 = this.xOf(d.x[k]!);
      box(k, x0, x0 + (this.value[k]! / this.value[f]!) * this.cssW, base + d.depth[k]!, false);
      drawn++;
      k++;
    }
    this.canvas.dataset.drawn = String(drawn);
  }
}

/** `text` cut with an ellipsis to `width` CSS pixels. */
function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let n = Math.min(text.length, Math.floor(width / 5));
  while (n > 1 && ctx.measureText(text.slice(0, n) + '…').width > width) n--;
  return n > 1 ? text.slice(0, n) + '…' : '';
}
