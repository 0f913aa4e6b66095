// The web page (web/) in a real headless Chromium: open the sample and a real corpus file, check the
// numbers shown against the library's own result for the same bytes, the timeline's pixels, hover and
// keyboard, the CSV download against `etw-decode dump`, Parquet read back with hyparquet, the Perfetto trace,
// a range shift-dragged on the timeline (the tables against analyzeCpu with the same selection, the downloads
// against `dump --from --to`), the search box, the thread lanes (threadStates), the flame graph of the samples (against
// analyzeSamples, whole and for a selection) and of the wait time (against analyzeWaits), a non-ETL file, cancelling, a million switches,
// and that the page makes no request off this machine. Skipped (one line) without Chromium; failed under
// CI=true. A screenshot of the loaded page goes to test/artifacts/page.png.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { analyzeWaits } from '../../src/analysis/waits.js';
import { analyzeCpu, analyzeSamples, analyzeSpinlocks, cpuUsage, decodeSync, resolveSelection, selectTable, threadStates, type DecodeResult } from '../../src/node.js';
import { ms } from '../../web/src/format.js';
import { generateMixedTrace, simulateSchedule, writeTrace } from '../../src/writer/index.js';
import { template, tinyBuffers } from '../helpers/hostile.js';
import { corpusPath, corpusTestsEnabled } from '../helpers/corpus.js';
import { hyparquetRows, readBytes } from '../helpers/readers.js';
import { ARTIFACTS, browserTestsEnabled, buildPage, cardValue, DIST, launch, ROOT, servePage, settled, type Browser } from './chromium.js';

const enabled = browserTestsEnabled();
const corpus = enabled && corpusTestsEnabled();
const en = (n: number | bigint) => n.toLocaleString('en-US');
const SAMPLE = join(ROOT, 'samples', 'sample.etl');
const CLI = join(ROOT, 'bin', 'etw-decode.js');

let browser: Browser;
let server: Server;
let url: string;
let tmp: string;

describe.skipIf(!enabled)('the web page in Chromium', () => {
  beforeAll(async () => {
    buildPage();
    ({ server, url } = await servePage());
    browser = await launch();
    tmp = mkdtempSync(join(tmpdir(), 'etw-decode-web-'));
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** A page at the served URL (or file://), with a decoded trace or an error shown. */
  async function openPage(how: { sample: true } | { file: string }, from: 'http' | 'file' = 'http'): Promise<{ page: Page; state: 'result' | 'error' }> {
    const page = await browser.newPage();
    await page.goto(from === 'http' ? url : pathToFileURL(join(DIST, 'index.html')).href);
    if ('sample' in how) await page.click('#open-sample');
    else await page.setInputFiles('#file-input', how.file);
    return { page, state: await settled(page) };
  }

  /** The numbers the summary shows, against the library's result for the same bytes. */
  async function checkSummary(page: Page, r: DecodeResult): Promise<void> {
    const s = r.summary;
    expect(await cardValue(page, 'windows')).toBe(s.trace!.osVersion);
    expect(await page.locator('[data-testid="windows"] .sub').innerText()).toContain(`build ${s.trace!.build}`);
    expect(await cardValue(page, 'cpus')).toBe(String(s.trace!.numberOfProcessors));
    expect(await cardValue(page, 'clock')).toBe(s.trace!.clockName);
    expect(await cardValue(page, 'events')).toBe(en(s.events));
    expect(await page.locator('[data-testid="events"] .sub').innerText()).toBe(`${en(s.buffers)} buffers · ${en(s.eventsByKind.length)} kinds`);
    expect(await cardValue(page, 'cswitch')).toBe(en(s.cswitch));
    expect(await cardValue(page, 'spinlock')).toBe(en(s.spinlock));
    expect(await cardValue(page, 'lifetimes')).toBe(`${en(s.threads)} · ${en(s.processes)}`);
    // events by kind: the biggest kind first, with its count
    const top = [...s.eventsByKind].sort((a, b) => b.count - a.count)[0]!;
    expect(await page.locator('[data-testid="kinds"] tbody tr').first().locator('td').nth(3).innerText()).toBe(en(top.count));
  }

  test('the sample (served on localhost): the summary, CPU usage and spin locks are the library’s numbers', async () => {
    const { page, state } = await openPage({ sample: true });
    expect(state).toBe('result');
    const r = decodeSync(readFileSync(SAMPLE));
    await checkSummary(page, r);
    // CPU usage by process: the first rows are analyzeCpu's, in its order, with its milliseconds
    const cpu = analyzeCpu(r);
    const rows = page.locator('[data-testid="cpu-process"] tbody tr');
    for (let i = 0; i < 3; i++) {
      const p = cpu.processes[i]!;
      const cells = rows.nth(i).locator('td');
      expect((await cells.nth(0).innerText()).trim()).toBe(p.imageFileName ?? (p.processId === 0 ? 'Idle' : '–'));
      expect(await cells.nth(1).innerText()).toBe(String(p.processId));
      expect(await cells.nth(3).innerText()).toBe(p.cpuMs!.toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 }));
      expect(await cells.nth(5).innerText()).toBe(en(p.switchIns));
      const p99 = p.readyPercentiles!.p99Ms;
      expect(await cells.nth(8).innerText()).toBe(p99 === null ? '–' : p99.toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 }));
    }
    // sorting by switch-ins: the table follows
    await page.click('[data-testid="cpu-process"] button.sort[data-key="switchIns"]');
    const most = Math.max(...cpu.processes.map((p) => p.switchIns));
    expect(await rows.first().locator('td').nth(5).innerText()).toBe(en(most));
    // by thread
    await page.click('#tab-thread');
    expect(await page.locator('[data-testid="cpu-thread"] tbody tr').count()).toBe(Math.min(50, cpu.threads.length));
    // spin locks: totals and the most contended lock
    const spin = analyzeSpinlocks(r);
    const note = await page.locator('#spin-note').innerText();
    expect(note).toContain(`${en(spin.totals.rows)} released spin locks, ${en(spin.totals.contended)} contended`);
    expect(note).toContain(`${en(spin.totals.locks)} locks, ${en(spin.totals.callers)} callers`);
    const first = page.locator('[data-testid="spin-lock"] tbody tr').first().locator('td');
    expect(await first.nth(0).innerText()).toBe('0x' + spin.byLock[0]!.address.toString(16).padStart(16, '0'));
    expect(await first.nth(2).innerText()).toBe(en(spin.byLock[0]!.contended));
    // nothing lost in the sample
    await expect(page.locator('[data-testid="no-problems"]').count()).resolves.toBe(1);
    await page.click('#tab-process');
    await page.screenshot({ path: join(ARTIFACTS, 'page.png'), fullPage: true });
    if (process.env.UPDATE_DOCS_SCREENSHOT) {
      // the README's picture (docs/page.png): the top of the page at a laptop's width, a range selected, the thread lanes shown
      await page.setViewportSize({ width: 1280, height: 980 });
      await page.waitForTimeout(300);
      await shiftDrag(page, 0.35, 0.6);
      await selectedRange(page);
      await page.click('#threads-show');
      await page.waitForSelector('canvas.thread-canvas');
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(ROOT, 'docs', 'page.png') });
    }
    await page.close();
  });

  test('the timeline is drawn, answers hover and the keyboard', async () => {
    const { page } = await openPage({ sample: true });
    const canvas = page.locator('canvas.timeline-canvas');
    await expect(canvas.count()).resolves.toBe(1);
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')?.dataset.drawMs !== undefined);
    // pixels of the lanes: mostly coloured (the sample's CPUs are busy), in several process colours
    const px = await page.evaluate(() => {
      const c = document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')!;
      const d = c.getContext('2d')!.getImageData(Math.round(c.width * 0.1), Math.round(c.height * 0.3), Math.round(c.width * 0.85), Math.round(c.height * 0.5)).data;
      let coloured = 0;
      const colours = new Set<number>();
      for (let i = 0; i < d.length; i += 4) {
        const r = d[i]!, g = d[i + 1]!, b = d[i + 2]!;
        if (Math.max(r, g, b) - Math.min(r, g, b) > 40) {
          coloured++;
          colours.add((r << 16) | (g << 8) | b);
        }
      }
      return { coloured: coloured / (d.length / 4), colours: colours.size };
    });
    expect(px.coloured).toBeGreaterThan(0.3);
    expect(px.colours).toBeGreaterThanOrEqual(5);
    // hover: a tooltip naming the process, thread, CPU and times of the switch under the pointer
    const box = (await canvas.boundingBox())!;
    let tip = '';
    for (let x = 0.2; x < 0.95 && !tip; x += 0.05) {
      await page.mouse.move(box.x + 58 + x * (box.width - 58), box.y + 24 + 10);
      if (await page.locator('.tooltip').isVisible()) tip = await page.locator('.tooltip').innerText();
    }
    expect(tip).toMatch(/thread\s+\d+/);
    expect(tip).toMatch(/CPU\s+0/);
    expect(tip).toMatch(/ran\s+[\d,]+\.\d{3} ms → [\d,]+\.\d{3} ms/);
    // keyboard: + zooms in, Home resets
    const range = () => page.locator('#timeline-range').innerText();
    const full = await range();
    await canvas.focus();
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    expect(await range()).not.toBe(full);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Home');
    expect(await range()).toBe(full);
    // a process of the legend highlights
    await page.locator('#legend button').first().press('Enter');
    await expect(page.locator('#legend button').first().getAttribute('aria-pressed')).resolves.toBe('true');
    await page.close();
  });

  test('downloads: the CSV of cswitch and of cpuUsage is `etw-decode dump` byte for byte', async () => {
    const { page } = await openPage({ sample: true });
    for (const table of ['cswitch', 'cpuUsage']) {
      await page.selectOption('#dl-table', table);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl-buttons button[data-format="csv"]')]);
      expect(download.suggestedFilename()).toBe(`sample.${table}.csv`);
      const path = join(tmp, `${table}.csv`);
      await download.saveAs(path);
      const got = readFileSync(path, 'utf8');
      const want = execFileSync(process.execPath, [CLI, 'dump', SAMPLE, '--table', table, '--format', 'csv'], { encoding: 'utf8', maxBuffer: 1 << 28 });
      expect(got.split('\n').length).toBeGreaterThan(1000);
      expect(got).toBe(want);
    }
    // the view's CSV: the CPU usage table as sorted on the page
    const [view] = await Promise.all([page.waitForEvent('download'), page.click('#dl-view')]);
    const viewPath = join(tmp, 'view.csv');
    await view.saveAs(viewPath);
    const lines = readFileSync(viewPath, 'utf8').trim().split('\n');
    const cpu = analyzeCpu(decodeSync(readFileSync(SAMPLE)));
    expect(lines[0]).toBe('processId,imageFileName,threads,switchIns,cpuTicks,readyTicks,waitTicks,cpuMs,readyMs,waitMs');
    expect(lines.length - 1).toBe(cpu.processes.length);
    expect(lines[1]!.split(',').slice(0, 5)).toEqual([String(cpu.processes[0]!.processId), cpu.processes[0]!.imageFileName, String(cpu.processes[0]!.threads), String(cpu.processes[0]!.switchIns), String(cpu.processes[0]!.cpuTicks)]);
    await page.close();
  });

  test('downloads: Parquet reads back (hyparquet) as the library’s table; the Perfetto trace is framed TracePackets', async () => {
    const { page } = await openPage({ sample: true }, 'file');
    const r = decodeSync(readFileSync(SAMPLE));
    for (const table of ['cswitch', 'cpuUsage'] as const) {
      await page.selectOption('#dl-table', table);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl-buttons button[data-format="parquet"]')]);
      expect(download.suggestedFilename()).toBe(`sample.${table}.parquet`);
      const path = join(tmp, `${table}.parquet`);
      await download.saveAs(path);
      const rows = await hyparquetRows(readBytes(path));
      const want = table === 'cswitch' ? r.cswitch : cpuUsage(r);
      expect(rows.length).toBe(want.length);
      // cswitch in decode order; cpuUsage in the streaming deriver's order: compare as sets of rows
      const key = (x: Record<string, unknown>) =>
        table === 'cswitch'
          ? `${x.timestamp}/${x.cpu}/${x.oldThreadId}/${x.newThreadId}/${x.fileOffset}`
          : `${x.cpu}/${x.switchInTime}/${x.newThreadId}/${x.newProcessId}/${x.cpuUsage}/${x.ready}/${x.waits}`;
      const got = rows.map(key);
      const expected = want.toArray().map((x) => key(x as unknown as Record<string, unknown>));
      if (table === 'cswitch') expect(got).toEqual(expected);
      else expect([...got].sort()).toEqual([...expected].sort());
    }
    const [trace] = await Promise.all([page.waitForEvent('download'), page.click('#dl-trace button[data-format="perfetto"]')]);
    expect(trace.suggestedFilename()).toBe('sample.perfetto-trace');
    const path = join(tmp, 'sample.perfetto-trace');
    await trace.saveAs(path);
    const bytes = readFileSync(path);
    expect(bytes.length).toBeGreaterThan(10_000);
    expect(bytes[0]).toBe(0x0a); // Trace.packet, field 1, length-delimited
    // the whole file is a sequence of `packet` fields: tag 0x0a, varint length, the packet
    let at = 0;
    let packets = 0;
    while (at < bytes.length) {
      expect(bytes[at]).toBe(0x0a);
      at++;
      let len = 0;
      for (let shift = 0; ; shift += 7) {
        const b = bytes[at++]!;
        len += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
      at += len;
      packets++;
    }
    expect(at).toBe(bytes.length);
    expect(packets).toBeGreaterThan(3);
    expect(await page.locator('#dl-status').innerText()).toContain('sample.perfetto-trace');
    await page.close();
  });

  /** Shift-drags on the timeline from fraction `a` to `b` of its plot (the first lane's height). */
  async function shiftDrag(page: Page, a: number, b: number): Promise<void> {
    const box = (await page.locator('canvas.timeline-canvas').boundingBox())!;
    const x = (f: number) => box.x + 58 + f * (box.width - 58);
    const y = box.y + 24 + 10;
    await page.keyboard.down('Shift');
    await page.mouse.move(x(a), y);
    await page.mouse.down();
    await page.mouse.move((x(a) + x(b)) / 2, y, { steps: 4 });
    await page.mouse.move(x(b), y, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
  }

  /** The selected range's bounds (ns since the trace start) as the page states them, once its tables are recomputed. */
  async function selectedRange(page: Page): Promise<{ from: bigint; to: bigint }> {
    await page.waitForFunction(() => document.getElementById('cpu-note')!.textContent!.startsWith('In the selected range'));
    const ns = async (k: string) => BigInt((await page.locator('#selection').getAttribute(k))!.replace(/ns$/, ''));
    return { from: await ns('data-from'), to: await ns('data-to') };
  }

  test('a range shift-dragged on the timeline: the CPU usage and spin locks are analyzeCpu’s for that selection; Escape clears it', async () => {
    const { page } = await openPage({ sample: true });
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')?.dataset.drawMs !== undefined);
    const r = decodeSync(readFileSync(SAMPLE));
    const whole = analyzeCpu(r);
    // a plain drag still pans (zoomed in), and selects nothing
    const canvas = page.locator('canvas.timeline-canvas');
    await canvas.focus();
    await page.keyboard.press('+');
    const before = await page.locator('#timeline-range').innerText();
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + 34);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.4, box.y + 34, { steps: 4 });
    await page.mouse.up();
    expect(await page.locator('#timeline-range').innerText()).not.toBe(before);
    expect(await page.locator('#selection-text').innerText()).toBe('Whole trace');
    await page.keyboard.press('Home');
    // shift-drag over the middle of the trace
    await shiftDrag(page, 0.3, 0.6);
    const { from, to } = await selectedRange(page);
    expect(to).toBeGreaterThan(from);
    expect(from % 1000n).toBe(0n); // to the microsecond
    const text = await page.locator('#selection-text').innerText();
    expect(text).toBe(`Selected ${(Number(from) / 1e6).toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 })} – ${(Number(to) / 1e6).toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 })} ms (${ms(Number(to - from) / 1e6)})`);
    // the library's selection for the same bounds
    const selection = resolveSelection({ from: { ns: from }, to: { ns: to } }, r.clock, r);
    const cpu = analyzeCpu(r, { selection });
    expect(cpu.total.switchIns).toBeGreaterThan(0);
    expect(cpu.total.switchIns).toBeLessThan(whole.total.switchIns);
    const note = await page.locator('#cpu-note').innerText();
    expect(note).toContain(`CPU time ${ms(cpu.total.cpuMs)} in ${en(cpu.total.switchIns)} switch-ins`);
    const rows = page.locator('[data-testid="cpu-process"] tbody tr');
    expect(await rows.count()).toBe(Math.min(50, cpu.processes.length));
    for (let i = 0; i < 3; i++) {
      const p = cpu.processes[i]!;
      const cells = rows.nth(i).locator('td');
      expect(await cells.nth(1).innerText()).toBe(String(p.processId));
      expect(await cells.nth(3).innerText()).toBe(p.cpuMs!.toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 }));
      expect(await cells.nth(5).innerText()).toBe(en(p.switchIns));
    }
    // every process's exact ticks, through the view's CSV
    const [view] = await Promise.all([page.waitForEvent('download'), page.click('#dl-view')]);
    const viewPath = join(tmp, 'view-selected.csv');
    await view.saveAs(viewPath);
    const got = readFileSync(viewPath, 'utf8').trim().split('\n').slice(1).map((l) => l.split(',').slice(0, 7).join(','));
    expect(got).toEqual(cpu.processes.map((p) => [p.processId, p.imageFileName ?? '', p.threads, p.switchIns, p.cpuTicks, p.readyTicks, p.waitTicks].join(',')));
    // by thread: the same threads, the same CPU ticks in all
    await page.click('#tab-thread');
    expect(await page.locator('[data-testid="cpu-thread"] tbody tr').count()).toBe(Math.min(50, cpu.threads.length));
    expect(cpu.threads.reduce((a, t) => a + t.cpuTicks, 0n)).toBe(cpu.total.cpuTicks);
    // spin locks: those released in the range
    const spin = analyzeSpinlocks({ spinlock: selectTable(r.spinlock, selection), info: r.info });
    expect(spin.totals.rows).toBeLessThan(r.summary.spinlock);
    expect(await page.locator('#spin-note').innerText()).toContain(`In the selected range: ${en(spin.totals.rows)} released spin locks, ${en(spin.totals.contended)} contended`);
    // Escape: the whole trace again
    await canvas.focus();
    await page.keyboard.press('Escape');
    expect(await page.locator('#selection-text').innerText()).toBe('Whole trace');
    expect(await page.locator('#cpu-note').innerText()).toContain(`CPU time ${ms(whole.total.cpuMs)} in ${en(whole.total.switchIns)} switch-ins`);
    expect(await page.locator('[data-testid="cpu-thread"] tbody tr').count()).toBe(Math.min(50, whole.threads.length)); // the tab stayed
    // the clear button too
    await shiftDrag(page, 0.1, 0.2);
    await selectedRange(page);
    await page.click('#selection-clear');
    expect(await page.locator('#selection-text').innerText()).toBe('Whole trace');
    await page.close();
  });

  test('downloads follow the selected range (`dump --from --to` byte for byte) and the trace shown; a new trace resets both', async () => {
    const { page } = await openPage({ sample: true }, 'file');
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')?.dataset.drawMs !== undefined);
    await shiftDrag(page, 0.2, 0.5);
    const { from, to } = await selectedRange(page);
    const r = decodeSync(readFileSync(SAMPLE));
    const selection = resolveSelection({ from: { ns: from }, to: { ns: to } }, r.clock, r);
    const msText = (ns: bigint) => `${ns / 1_000_000n}${ns % 1_000_000n ? '.' + (ns % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '') : ''}ms`;
    const stem = `sample.${msText(from)}-${msText(to)}`;
    for (const table of ['cswitch', 'cpuUsage']) {
      await page.selectOption('#dl-table', table);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl-buttons button[data-format="csv"]')]);
      expect(download.suggestedFilename()).toBe(`${stem}.${table}.csv`);
      const path = join(tmp, `selected.${table}.csv`);
      await download.saveAs(path);
      const got = readFileSync(path, 'utf8');
      const want = execFileSync(process.execPath, [CLI, 'dump', SAMPLE, '--table', table, '--format', 'csv', '--from', `${from}ns`, '--to', `${to}ns`], { encoding: 'utf8', maxBuffer: 1 << 28 });
      expect(got.split('\n').length).toBeGreaterThan(100);
      expect(got.length).toBeLessThan(execFileSync(process.execPath, [CLI, 'dump', SAMPLE, '--table', table, '--format', 'csv'], { encoding: 'utf8', maxBuffer: 1 << 28 }).length);
      expect(got).toBe(want);
    }
    // Parquet: the selected rows
    await page.selectOption('#dl-table', 'cswitch');
    const [pq] = await Promise.all([page.waitForEvent('download'), page.click('#dl-buttons button[data-format="parquet"]')]);
    const pqPath = join(tmp, 'selected.parquet');
    await pq.saveAs(pqPath);
    expect((await hyparquetRows(readBytes(pqPath))).length).toBe(selectTable(r.cswitch, selection).length);
    // Perfetto: the switches of the range
    const [trace] = await Promise.all([page.waitForEvent('download'), page.click('#dl-trace button[data-format="perfetto"]')]);
    expect(trace.suggestedFilename()).toBe(`${stem}.perfetto-trace`);
    const status = await page.locator('#dl-status').innerText();
    expect(status).toBe(`${stem}.perfetto-trace: ${en(selectTable(r.cswitch, selection).length)} rows, ${status.split(' rows, ')[1]}`);
    // another trace: no selection, no status of the previous one
    await page.setInputFiles('#file-input', SAMPLE);
    await page.waitForFunction(() => document.getElementById('summary-file')!.textContent === '· sample.etl' && !document.getElementById('result')!.hidden);
    await page.waitForFunction(() => document.getElementById('progress')!.hidden);
    expect(await page.locator('#dl-status').innerText()).toBe('');
    expect(await page.locator('#selection-text').innerText()).toBe('Whole trace');
    const [again] = await Promise.all([page.waitForEvent('download'), page.click('#dl-buttons button[data-format="csv"]')]);
    expect(again.suggestedFilename()).toBe('sample.cswitch.csv');
    await page.close();
  });

  test('the search box filters the CPU tables by process or thread name or id, and highlights the timeline', async () => {
    const { page } = await openPage({ sample: true });
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')?.dataset.drawMs !== undefined);
    const cpu = analyzeCpu(decodeSync(readFileSync(SAMPLE)));
    const coloured = () =>
      page.evaluate(
        () =>
          new Promise<number>((resolve) =>
            requestAnimationFrame(() =>
              requestAnimationFrame(() => {
                const c = document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')!;
                const d = c.getContext('2d')!.getImageData(Math.round(c.width * 0.1), Math.round(c.height * 0.3), Math.round(c.width * 0.85), Math.round(c.height * 0.5)).data;
                let n = 0;
                for (let i = 0; i < d.length; i += 4) if (Math.max(d[i]!, d[i + 1]!, d[i + 2]!) - Math.min(d[i]!, d[i + 1]!, d[i + 2]!) > 40) n++;
                resolve(n / (d.length / 4));
              }),
            ),
          ),
      );
    const all = await coloured();
    const rows = page.locator('[data-testid="cpu-process"] tbody tr');
    // by image name (part of it, any case)
    await page.fill('#search', 'CSRSS');
    const csrss = cpu.processes.filter((p) => p.imageFileName?.toLowerCase().includes('csrss'));
    expect(csrss.length).toBeGreaterThan(0);
    expect(await rows.count()).toBe(csrss.length);
    for (let i = 0; i < csrss.length; i++) expect((await rows.nth(i).locator('td').nth(0).innerText()).trim()).toBe(csrss[i]!.imageFileName);
    expect(await page.locator('#cpu-note').innerText()).toContain(`Search “csrss”: ${csrss.length} of ${cpu.processes.length} processes`);
    // the other processes drawn pale
    const highlighted = await coloured();
    expect(highlighted).toBeLessThan(all * 0.8);
    expect(highlighted).toBeGreaterThan(0);
    // by thread: that process's threads
    await page.click('#tab-thread');
    const threads = cpu.threads.filter((t) => t.imageFileName?.toLowerCase().includes('csrss') || t.name?.toLowerCase().includes('csrss'));
    expect(await page.locator('[data-testid="cpu-thread"] tbody tr').count()).toBe(Math.min(50, threads.length));
    // by id: a process id, a thread id
    await page.click('#tab-process');
    const top = cpu.processes.find((p) => p.processId !== 0)!;
    await page.fill('#search', String(top.processId));
    expect(await rows.count()).toBeGreaterThanOrEqual(1);
    expect(await rows.first().locator('td').nth(1).innerText()).toBe(String(top.processId));
    const t = cpu.threads.find((x) => x.processId !== 0 && cpu.processes.every((p) => String(p.processId) !== String(x.threadId)))!;
    await page.fill('#search', String(t.threadId));
    expect(await rows.count()).toBe(1);
    expect(await rows.first().innerText()).toBe('no process matches the search');
    await page.click('#tab-thread');
    expect(await page.locator('[data-testid="cpu-thread"] tbody tr').first().locator('td').nth(0).innerText()).toBe(String(t.threadId));
    // cleared: everything again, drawn as before
    await page.fill('#search', '');
    await page.click('#tab-process');
    expect(await rows.count()).toBe(Math.min(50, cpu.processes.length));
    expect(await coloured()).toBeCloseTo(all, 5);
    await page.close();
  });

  test('thread lanes: threadStates by thread, coloured by state, with the interval and who readied it on hover; they follow the search', async () => {
    const { page } = await openPage({ sample: true });
    const r = decodeSync(readFileSync(SAMPLE));
    const states = threadStates(r);
    const lanes = new Set(states.toArray().map((x) => `${x.threadId}/${x.processId}`));
    await page.click('#threads-show');
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.thread-canvas')?.dataset.drawMs !== undefined);
    const note = await page.locator('#threads-note').innerText();
    expect(note).toBe(`${en(lanes.size)} threads, ${en(states.length)} state intervals.`);
    // the states' colours: running (green) and waiting (light blue) are drawn
    const colours = await page.evaluate(() => {
      const c = document.querySelector<HTMLCanvasElement>('canvas.thread-canvas')!;
      const d = c.getContext('2d')!.getImageData(Math.round(c.width * 0.3), 0, Math.round(c.width * 0.65), c.height).data;
      let running = 0;
      let waiting = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] === 0x16 && d[i + 1] === 0xa3 && d[i + 2] === 0x4a) running++;
        if (d[i] === 0xbf && d[i + 1] === 0xdb && d[i + 2] === 0xfe) waiting++;
      }
      return { running, waiting };
    });
    expect(colours.running).toBeGreaterThan(100);
    expect(colours.waiting).toBeGreaterThan(100);
    // hover along the first thread's lane: a running interval readied by another thread
    const box = (await page.locator('canvas.thread-canvas').boundingBox())!;
    const tip = page.locator('#threads .tooltip');
    let text = '';
    for (let f = 0.05; f < 0.99 && !text.includes('readied by'); f += 0.01) {
      await page.mouse.move(box.x + 210 + f * (box.width - 210), box.y + 22 + 16 * 1.5);
      text = (await tip.isVisible()) ? await tip.innerText() : '';
    }
    expect(text).toMatch(/thread \d+/);
    expect(text).toMatch(/state\s+(Running|Ready)/);
    expect(text).toMatch(/from\s+[\d,]+\.\d{3} ms → [\d,]+\.\d{3} ms/);
    expect(text).toMatch(/readied by\s+thread \d+/);
    expect(text).toMatch(/priority\s+\d+/);
    // the search keeps the threads of the processes it matches
    await page.fill('#search', 'csrss');
    const pids = new Set(r.processes.toArray().filter((p) => (p.imageFileName ?? '').toLowerCase().includes('csrss')).map((p) => p.processId));
    const kept = [...lanes].filter((k) => pids.has(Number(k.split('/')[1]))).length;
    expect(kept).toBeGreaterThan(0);
    expect(await page.locator('#threads-note').innerText()).toBe(`${en(kept)} of ${en(lanes.size)} threads, ${en(states.length)} state intervals (search “csrss”).`);
    await page.close();
  });

  test('the flame graph of the sampled CPU: analyzeSamples’s totals, whole, for a selected range and a search; hover, zoom; none in the sample', async () => {
    const bytes = writeTrace(simulateSchedule({ seed: 7, cpus: 4, duration: 3_000_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes;
    const path = join(tmp, 'sampled.etl');
    writeFileSync(path, bytes);
    const r = decodeSync(bytes);
    const whole = analyzeSamples(r);
    expect(whole.samples).toBeGreaterThan(1000);
    expect(whole.cpuMs).not.toBeNull();
    const { page, state } = await openPage({ file: path });
    expect(state).toBe('result');
    const canvas = page.locator('canvas.flame-canvas');
    /** the root's totals as the canvas states them, once drawn with `note` in its note */
    const totals = async (note: string) => {
      await page.waitForFunction((n) => document.querySelector<HTMLCanvasElement>('canvas.flame-canvas')?.dataset.drawMs !== undefined && document.getElementById('flame-note')!.textContent!.includes(n), note);
      const a = (k: string) => canvas.getAttribute(`data-${k}`).then(Number);
      return { samples: await a('samples'), weight: await a('weight'), cpuMs: (await a('time')) / 10_000 };
    };
    expect(await totals(`${en(whole.samples)} samples`)).toEqual({ samples: whole.samples, weight: whole.weight, cpuMs: whole.cpuMs });
    expect(await page.locator('#flame-note').innerText()).toContain(`${ms(whole.cpuMs)} of CPU`);
    // drawn: the root row grey, the process row blue, frames in warm colours below
    const px = await page.evaluate(() => {
      const c = document.querySelector<HTMLCanvasElement>('canvas.flame-canvas')!;
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let warm = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i]! > 200 && d[i]! - d[i + 2]! > 60) warm++;
      return { warm: warm / (d.length / 4), rows: c.height / window.devicePixelRatio / 18 };
    });
    expect(px.warm).toBeGreaterThan(0.05);
    expect(px.rows).toBeGreaterThan(4);
    // hover: the root, then the widest process
    await page.locator('#flame-panel').scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    const tip = page.locator('#flame .tooltip');
    await page.mouse.move(box.x + box.width / 2, box.y + 9);
    expect(await tip.innerText()).toContain('all samples');
    expect(await tip.innerText()).toMatch(/of total\s+100(\.0)? %/);
    await page.mouse.move(box.x + 4, box.y + 18 + 9);
    const top = whole.byProcess[0]!;
    const tipText = await tip.innerText();
    expect(tipText).toContain(`(${top.processId})`);
    expect(tipText).toContain(`samples\n${en(top.samples)}`);
    expect(tipText).toContain(ms(top.cpuMs));
    // click a frame (row 3): zoomed into it; Reset zooms out
    await page.mouse.click(box.x + 4, box.y + 3 * 18 + 9);
    expect(await canvas.getAttribute('data-focus')).toMatch(/!0x[0-9a-f]+$|^0x[0-9a-f]+$/);
    expect(await page.locator('#flame-focus').innerText()).toMatch(/^zoomed into /);
    await page.mouse.move(box.x + box.width * 0.4, box.y + 4 * 18 + 9);
    expect(await tip.innerText()).toMatch(/of zoom\s+[\d.]+ %/);
    await page.screenshot({ path: join(ARTIFACTS, 'flame-zoomed.png'), clip: { x: box.x - 20, y: box.y - 120, width: box.width + 40, height: Math.min(700, box.height + 180) } });
    await page.click('#flame-reset');
    expect(await canvas.getAttribute('data-focus')).toBe('');
    expect(await page.locator('#flame-reset').isDisabled()).toBe(true);
    await page.locator('#flame-panel').screenshot({ path: join(ARTIFACTS, 'flame.png') });
    // a selected range: the samples the library's selection keeps
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')?.dataset.drawMs !== undefined);
    await page.locator('canvas.timeline-canvas').scrollIntoViewIfNeeded();
    await shiftDrag(page, 0.3, 0.6);
    const { from, to } = await selectedRange(page);
    const part = analyzeSamples(r, { selection: resolveSelection({ from: { ns: from }, to: { ns: to } }, r.clock, r) });
    expect(part.samples).toBeLessThan(whole.samples);
    expect(part.samples).toBeGreaterThan(0);
    expect(await totals(`In the selected range: ${en(part.samples)} samples`)).toEqual({ samples: part.samples, weight: part.weight, cpuMs: part.cpuMs });
    // the search: the samples of the processes (or threads) it matches, as the CPU table's rule
    const q = 'svchost';
    const kept = part.byThread.filter((t) => (t.imageFileName ?? '').toLowerCase().includes(q));
    expect(kept.length).toBeGreaterThan(0);
    await page.fill('#search', q);
    const n = kept.reduce((a, t) => a + t.samples, 0);
    expect(await totals(`${en(n)} samples`)).toMatchObject({ samples: n, weight: kept.reduce((a, t) => a + t.weight, 0) });
    expect(await page.locator('#flame-note').innerText()).toContain(`(search “${q}”)`);
    // cleared: the whole trace again
    await page.fill('#search', '');
    await page.click('#selection-clear');
    expect(await totals(`${en(whole.samples)} samples`)).toEqual({ samples: whole.samples, weight: whole.weight, cpuMs: whole.cpuMs });
    // the sample trace has no samples: the panel says so
    await page.setInputFiles('#file-input', SAMPLE);
    await page.waitForFunction(() => document.getElementById('summary-file')!.textContent === '· sample.etl' && !document.getElementById('result')!.hidden);
    expect(await page.locator('[data-testid="flame-empty"]').innerText()).toContain('No SampledProfile events in this trace');
    expect(await page.locator('canvas.flame-canvas').count()).toBe(0);
    await page.close();
  });

  test('the flame graph of the wait time: analyzeWaits’s totals, whole, for a selected range and a thread; both stacks drawn; no stacks in the sample', async () => {
    const bytes = writeTrace(simulateSchedule({ seed: 3, cpus: 3, duration: 1_500_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes;
    const path = join(tmp, 'waits.etl');
    writeFileSync(path, bytes);
    const r = decodeSync(bytes);
    const usage = cpuUsage(r);
    const waitsOf = (u = usage) => analyzeWaits({ cpuUsage: u, cswitch: r.cswitch, readythread: r.readythread, stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, images: r.images, ticksPerSecond: r.clock!.ticksPerSecond });
    const whole = waitsOf();
    expect(whole.waits).toBeGreaterThan(100);
    const { page, state } = await openPage({ file: path });
    expect(state).toBe('result');
    const canvas = page.locator('canvas.flame-canvas');
    /** the root's totals as the canvas states them, once the wait time is drawn with `note` in its note */
    const totals = async (note: string) => {
      await page.waitForFunction(
        (n) => document.querySelector<HTMLCanvasElement>('canvas.flame-canvas')?.dataset.drawMs !== undefined && document.getElementById('flame-note')!.textContent!.includes(n) && document.getElementById('flame-note')!.textContent!.includes(' blocked'),
        note,
      );
      const a = (k: string) => canvas.getAttribute(`data-${k}`).then(Number);
      return { waits: await a('samples'), ticks: await a('weight'), ms: (await a('time')) / 10_000 };
    };
    const want = (w: typeof whole) => ({ waits: w.waits, ticks: Number(w.waitTicks), ms: expect.closeTo(w.waitMs!, 9) });
    // the sampled CPU first; the choice switches to the wait time
    await page.waitForFunction(() => document.getElementById('flame-note')!.textContent!.includes(' samples'));
    await page.locator('#flame-panel').scrollIntoViewIfNeeded();
    await page.click('#tab-flame-waits');
    expect(await page.locator('#tab-flame-waits').getAttribute('aria-selected')).toBe('true');
    expect(await totals(`${en(whole.waits)} waits`)).toEqual(want(whole));
    const note = await page.locator('#flame-note').innerText();
    expect(note).toContain(`${ms(whole.waitMs)} blocked`);
    expect(note).toContain(`${en(whole.withWaitStack)} with the stack where the thread waited, ${en(whole.withReadyStack)} with the readying thread's stack`);
    expect(await page.locator('#flame-hint').innerText()).toContain('READIED BY');
    // drawn: frames where threads waited (warm in an image; grey outside any, as the simulation's switch stacks
    // are), READIED BY (green), the readying stacks (cool)
    const px = await page.evaluate(() => {
      const c = document.querySelector<HTMLCanvasElement>('canvas.flame-canvas')!;
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let warm = 0;
      let green = 0;
      let cool = 0;
      for (let i = 0; i < d.length; i += 4) {
        const [r, g, b] = [d[i]!, d[i + 1]!, d[i + 2]!];
        if (r === 0x86 && g === 0xef && b === 0xac) green++;
        else if ((r > 200 && r - b > 60) || (r === 0xd1 && g === 0xd5 && b === 0xdb)) warm++;
        else if (b > 150 && g > 150 && r < 150) cool++;
      }
      const n = d.length / 4;
      return { warm: warm / n, green: green / n, cool: cool / n, rows: c.height / window.devicePixelRatio / 18 };
    });
    expect(px.warm).toBeGreaterThan(0.02);
    expect(px.green).toBeGreaterThan(0.005);
    expect(px.cool).toBeGreaterThan(0.005);
    expect(px.rows).toBeGreaterThan(6);
    // hover: the root, then the widest process: its waits and blocked time
    const box = (await canvas.boundingBox())!;
    const tip = page.locator('#flame .tooltip');
    await page.mouse.move(box.x + box.width / 2, box.y + 9);
    expect(await tip.innerText()).toContain('all waits');
    expect(await tip.innerText()).toMatch(/of total\s+100(\.0)? %/);
    expect(await tip.innerText()).toContain(`blocked\n${ms(whole.waitMs)}`);
    await page.screenshot({ path: join(ARTIFACTS, 'flame-waits.png'), clip: { x: box.x - 20, y: box.y - 130, width: box.width + 40, height: Math.min(760, box.height + 200) } });
    // a selected range: the waits of the switch-ins selectTable keeps, as `cpu --waits --from --to`
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.timeline-canvas')?.dataset.drawMs !== undefined);
    await page.locator('canvas.timeline-canvas').scrollIntoViewIfNeeded();
    await shiftDrag(page, 0.3, 0.6);
    const { from, to } = await selectedRange(page);
    const sel = (o: { threadIds?: number[] } = {}) => resolveSelection({ from: { ns: from }, to: { ns: to }, ...o }, r.clock, r);
    const part = waitsOf(selectTable(usage, sel()));
    expect(part.waits).toBeLessThan(whole.waits);
    expect(part.waits).toBeGreaterThan(0);
    expect(await totals(`In the selected range: ${en(part.waits)} waits`)).toEqual(want(part));
    // and a thread, by its name in the search box: the waits of its switch-ins in the range
    const threads = r.threads.toArray();
    const images = r.processes.toArray().map((p) => (p.imageFileName ?? '').toLowerCase());
    const pick = threads
      .filter((t) => t.name)
      .map((t) => {
        const q = t.name!.toLowerCase();
        const tids = threads.filter((x) => (x.name ?? '').toLowerCase().includes(q)).map((x) => x.threadId);
        return { q, tids, w: images.some((i) => i.includes(q)) ? null : waitsOf(selectTable(usage, sel({ threadIds: tids }))) };
      })
      .find((x) => x.w !== null && x.w.waits > 0 && x.w.waits < part.waits)!;
    expect(pick).toBeDefined();
    await page.fill('#search', pick.q);
    expect(await totals(`In the selected range: ${en(pick.w!.waits)} waits`)).toEqual(want(pick.w!));
    expect(await page.locator('#flame-note').innerText()).toContain(`(search “${pick.q}”)`);
    await page.locator('#flame-panel').scrollIntoViewIfNeeded();
    await page.locator('#flame-panel').screenshot({ path: join(ARTIFACTS, 'flame-waits-selected.png') });
    // down the leftmost column: the READIED BY frame, its waits and blocked time on hover; a click zooms into it
    const at = (await canvas.boundingBox())!;
    let row = 2;
    for (; row < 40; row++) {
      await page.mouse.move(at.x + 4, at.y + row * 18 + 9);
      if ((await tip.innerText()).startsWith('READIED BY ')) break;
    }
    expect(row).toBeLessThan(40);
    const readied = await tip.innerText();
    expect(readied).toMatch(/^READIED BY .+ tid \d+\nwaiting process\n.+\nwaits\n\d+\nof total\n[\d.]+ %\nblocked\n[\d.,]+ (ms|µs|s)\nclick to zoom in$/);
    await page.mouse.click(at.x + 4, at.y + row * 18 + 9);
    expect(await canvas.getAttribute('data-focus')).toMatch(/^READIED BY /);
    await page.mouse.move(at.x + at.width / 2, at.y + (row + 1) * 18 + 9);
    expect(await tip.innerText()).toMatch(/of zoom\s+[\d.]+ %/);
    await page.locator('#flame-panel').screenshot({ path: join(ARTIFACTS, 'flame-waits-zoomed.png') });
    await page.click('#flame-reset');
    // back to the sampled CPU, for the same selection and search
    await page.click('#tab-flame-samples');
    await page.waitForFunction(() => / samples/.test(document.getElementById('flame-note')!.textContent!) || document.querySelector('[data-testid="flame-none"]') !== null);
    // cleared: the whole trace's waits again
    await page.click('#tab-flame-waits');
    await page.fill('#search', '');
    await page.click('#selection-clear');
    expect(await totals(`${en(whole.waits)} waits`)).toEqual(want(whole));
    // the sample trace has switches but no stacks: the wait time says why it is empty
    await page.setInputFiles('#file-input', SAMPLE);
    await page.waitForFunction(() => document.getElementById('summary-file')!.textContent === '· sample.etl' && !document.getElementById('result')!.hidden);
    expect(await page.locator('#tab-flame-waits').getAttribute('aria-selected')).toBe('true');
    const empty = await page.locator('[data-testid="flame-empty"]').innerText();
    expect(empty).toContain('No stacks in this trace');
    expect(empty).toContain('-stackwalk CSwitch+ReadyThread');
    expect(await page.locator('canvas.flame-canvas').count()).toBe(0);
    await page.locator('#flame-panel').screenshot({ path: join(ARTIFACTS, 'flame-waits-empty.png') });
    await page.close();
  });

  test.skipIf(!corpus)('a real trace from the corpus, page opened from file://: its numbers, and that it holds no context switches', async () => {
    const file = corpusPath('perfview-net.4.5.2.x64.etl');
    const { page, state } = await openPage({ file }, 'file');
    expect(state).toBe('result');
    const r = decodeSync(readFileSync(file));
    await checkSummary(page, r);
    expect(r.summary.cswitch).toBe(0);
    const note = await page.locator('[data-testid="no-switches"]').innerText();
    expect(note).toContain('No context switches in this trace');
    expect(note).toContain('kernel flag CSWITCH was off');
    expect(await page.locator('#timeline').innerText()).toContain('No thread ran');
    await page.close();
  });

  test('files that are not ETL traces get a clear error', async () => {
    const text = join(tmp, 'notes.txt');
    writeFileSync(text, 'these are my notes, not a trace\n'.repeat(20));
    const { page, state } = await openPage({ file: text });
    expect(state).toBe('error');
    expect(await page.locator('#error-title').innerText()).toBe('notes.txt is not an ETL trace');
    expect(await page.locator('#error-text').innerText()).toMatch(/^not an ETL file: .*the file starts with text/);
    const empty = join(tmp, 'empty.etl');
    writeFileSync(empty, new Uint8Array(0));
    await page.setInputFiles('#file-input', empty);
    await page.waitForFunction(() => document.getElementById('error-text')!.textContent!.includes('input is empty'));
    expect(await page.locator('#drop').isVisible()).toBe(true); // ready for another file
    await page.close();
  });

  test('lost and corrupt data is shown, with its severity', async () => {
    // 200 buffers, each followed by a corrupt buffer header: 200 corrupt buffers skipped
    const bytes = tinyBuffers(200, 'ascending', true);
    const path = join(tmp, 'corrupt.etl');
    writeFileSync(path, bytes);
    const r = decodeSync(bytes);
    expect(r.summary.diagnostics.buffersCorrupt).toBe(200);
    const { page, state } = await openPage({ file: path });
    expect(state).toBe('result');
    const warn = await page.locator('[data-testid="data-loss"]').innerText();
    expect(warn).toContain('Data was lost or is corrupt');
    expect(warn).toContain('200 corrupt buffers skipped');
    const item = page.locator('[data-testid="problems"] li[data-counter="buffersCorrupt"]');
    expect(await item.locator('.badge').innerText()).toBe('data loss');
    expect(await item.locator('.num').innerText()).toBe('200');
    // the issues with their file offsets
    expect(await page.locator('#diagnostics details summary').first().innerText()).toContain(`${en(r.summary.issues.length)} issues`);
    expect(await cardValue(page, 'cswitch')).toBe(en(r.summary.cswitch));
    await page.close();
  });

  test('a long decode can be cancelled', async () => {
    // a header buffer, then 1 GiB of zeros (a sparse file): the resync scan reads it all
    const path = join(tmp, 'zeros.etl');
    const fd = openSync(path, 'w');
    writeSync(fd, template().header);
    ftruncateSync(fd, 1 << 30);
    closeSync(fd);
    const page = await browser.newPage();
    await page.goto(url);
    await page.setInputFiles('#file-input', path);
    await page.waitForSelector('#progress:not([hidden])');
    await page.click('#cancel');
    await page.waitForSelector('#drop:not([hidden])');
    expect(await page.locator('#error-title').innerText()).toBe('Decoding cancelled');
    expect(await page.locator('#result').isVisible()).toBe(false);
    await page.close();
  });

  test('a million context switches decode and draw', async () => {
    const bytes = generateMixedTrace({ seed: 11, targetBytes: 16 << 20, cpus: 8, mix: { compact: 3, cswitch: 1 } }).bytes;
    const path = join(tmp, 'million.etl');
    writeFileSync(path, bytes);
    const r = decodeSync(bytes);
    expect(r.summary.cswitch).toBeGreaterThan(1_000_000);
    const usage = cpuUsage(r);
    const { page, state } = await openPage({ file: path });
    expect(state).toBe('result');
    expect(await cardValue(page, 'cswitch')).toBe(en(r.summary.cswitch));
    // every switch-in is in the timeline, none coalesced
    expect(await page.locator('#timeline-note').innerText()).toContain(`${en(usage.length)} switches, every one drawn`);
    // a redraw of the whole range (every entry in view) and one zoomed in
    const drawMs = async () => Number(await page.locator('canvas.timeline-canvas').getAttribute('data-draw-ms'));
    await page.locator('canvas.timeline-canvas').focus();
    await page.keyboard.press('+');
    await page.waitForTimeout(100);
    const zoomed = await drawMs();
    await page.keyboard.press('Home');
    await page.waitForTimeout(100);
    const full = await drawMs();
    console.log(`timeline of ${en(usage.length)} switches: full redraw ${full} ms, zoomed ${zoomed} ms`);
    expect(full).toBeLessThan(500); // ~20-60 ms here; generous for a loaded machine
    // the thread lanes of the same switches: every state interval, drawn for the whole range
    await page.click('#threads-show');
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('canvas.thread-canvas')?.dataset.drawMs !== undefined, undefined, { timeout: 120_000 });
    expect(await page.locator('#threads-note').innerText()).toMatch(/^[\d,]+ threads, [\d,]+ state intervals\.$/);
    const intervals = Number((await page.locator('#threads-note').innerText()).split(' threads, ')[1]!.split(' ')[0]!.replace(/,/g, ''));
    expect(intervals).toBeGreaterThan(usage.length);
    const threadMs = Number(await page.locator('canvas.thread-canvas').getAttribute('data-draw-ms'));
    console.log(`thread lanes of ${en(intervals)} intervals: first draw ${threadMs} ms`);
    expect(threadMs).toBeLessThan(500);
    await page.close();
  });

  test('keyboard only: Tab reaches the buttons, Enter opens the sample', async () => {
    const page = await browser.newPage();
    // listening before the page loads: Playwright intercepts file choosers from then on (no race)
    const choosers: boolean[] = [];
    page.on('filechooser', (c) => choosers.push(c.isMultiple()));
    await page.goto(url);
    const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('open-file');
    // Enter on "Open .etl…" opens the file chooser (one file)
    await page.keyboard.press('Enter');
    await expect.poll(() => choosers).toEqual([false]);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('open-sample');
    await page.keyboard.press('Enter');
    expect(await settled(page)).toBe('result');
    await page.close();
  });

  test('no request left this machine, and no errors in the console', () => {
    expect(browser.external).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
