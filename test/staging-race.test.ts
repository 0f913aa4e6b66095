// DIR/.staging is removed by whichever run finds it empty, at any moment (src/convert/runs.ts): a recursive
// mkdir racing that removal fails with ENOENT (it finds the directory, then its check finds it gone), which
// once failed one of four concurrent converts. makeStaging tries again; a plain mkdir does not.
import { mkdir, mkdtemp, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { makeStaging } from '../src/convert/runs.js';

async function failuresWhileRemoved(make: (root: string) => Promise<void>, rounds: number): Promise<number> {
  const root = await mkdtemp(join(tmpdir(), 'etw-staging-race-'));
  let stop = false;
  const remover = (async () => {
    while (!stop) await rmdir(join(root, '.staging')).catch(() => undefined);
  })();
  let failures = 0;
  for (let i = 0; i < rounds; i++) await Promise.all([make(root), make(root)]).catch(() => failures++);
  stop = true;
  await remover;
  return failures;
}

test('makeStaging survives another run removing .staging meanwhile; a plain recursive mkdir does not', async () => {
  expect(await failuresWhileRemoved((r) => mkdir(join(r, '.staging'), { recursive: true }).then(() => undefined), 5000)).toBeGreaterThan(0);
  expect(await failuresWhileRemoved(makeStaging, 5000)).toBe(0);
});
