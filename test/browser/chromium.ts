// Driving the page in a real Chromium: Debian's `chromium` package (or CHROMIUM_PATH) through
// playwright-core, which downloads no browser. Without a Chromium the browser tests are skipped with one
// line saying how to enable them — except under CI=true, where they fail.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { requirementMet } from '../helpers/requirement.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DIST = join(ROOT, 'web', 'dist');
export const ARTIFACTS = join(ROOT, 'test', 'artifacts');

export const MISSING_LINE =
  "Chromium not found: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH to run the browser tests";

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium to drive, or null (none installed). */
export function chromiumPath(): string | null {
  const env = process.env.CHROMIUM_PATH;
  if (env) return executable(env) ? env : null;
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (executable(p)) return p;
  return null;
}

/** Whether to run the browser tests; says why not (once) or throws under CI=true. */
export function browserTestsEnabled(): boolean {
  return requirementMet(chromiumPath() !== null, MISSING_LINE, 'the browser tests');
}

/** Builds web/dist from the sources (esbuild, about a second). */
export function buildPage(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-web.mjs')], { stdio: 'pipe' });
}

export async function servePage(): Promise<{ server: Server; url: string }> {
  const { serve } = (await import(join(ROOT, 'scripts', 'serve-web.mjs'))) as { serve: (port: number) => Promise<Server> };
  const server = await serve(0);
  const a = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${a.port}/` };
}

export interface Browser {
  context: BrowserContext;
  /** every request to anything but this machine (the page must make none) */
  external: string[];
  /** console errors and uncaught page errors */
  errors: string[];
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile; every request is routed: local ones pass, others are aborted and recorded. */
export async function launch(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'etw-decode-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath()!,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const external: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    const local = /^(file|blob|data):/.test(url) || /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\//.test(url);
    if (local) return route.continue();
    external.push(url);
    return route.abort();
  });
  return {
    context,
    external,
    errors,
    async newPage() {
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits for the page to show a decoded trace or an error; returns which. */
export async function settled(page: Page, timeout = 120_000): Promise<'result' | 'error'> {
  const r = page.waitForSelector('#result:not([hidden])', { timeout }).then(() => 'result' as const);
  const e = page.waitForSelector('#error:not([hidden])', { timeout }).then(() => 'error' as const);
  return Promise.race([r, e]);
}

/** The text of the summary card with `data-testid`. */
export async function cardValue(page: Page, id: string): Promise<string> {
  return (await page.locator(`[data-testid="${id}"] .value`).innerText()).trim();
}
