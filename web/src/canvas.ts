// The page's canvases at the screen's resolution: one sizing of a canvas's backing store to its CSS size times
// the device pixel ratio (capped at 3), and their draws once per animation frame, for the timeline, the thread
// lanes and the flame graph.

/** The device pixel ratio the canvases draw at: 1 to 3. */
export function pixelRatio(): number {
  return Math.max(1, Math.min(3, window.devicePixelRatio || 1));
}

/**
 * Sizes `canvas` to cssW × cssH CSS pixels at `dpr` (the backing store only changes when its size does) and
 * returns its backing-store size in device pixels.
 */
export function sizeCanvas(canvas: HTMLCanvasElement, cssW: number, cssH: number, dpr: number): { W: number; H: number } {
  const W = Math.round(cssW * dpr);
  const H = Math.round(cssH * dpr);
  if (canvas.width !== W || canvas.height !== H) {
    canvas.width = W;
    canvas.height = H;
    canvas.style.height = `${cssH}px`;
  }
  return { W, H };
}

/**
 * At most one draw per animation frame, however many requests come before it; the time the last draw took is
 * on the element's `data-draw-ms` (the browser tests read it).
 */
export class FrameDraw {
  private frame = 0;
  constructor(
    private readonly draw: () => void,
    private readonly element: () => HTMLElement,
  ) {}

  request(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const started = performance.now();
      this.draw();
      this.element().dataset.drawMs = (performance.now() - started).toFixed(1);
    });
  }

  cancel(): void {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }
}
