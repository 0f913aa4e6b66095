// Every test's temporary files go into one directory per run, removed when the run ends: tests (and the CLI
// they spawn) that take os.tmpdir() leave nothing behind, whichever test made them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'etw-decode-test-'));
  process.env['TMPDIR'] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
