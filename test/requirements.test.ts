// What a test file does when something outside the repository is missing (test/helpers/requirement.ts):
// skipped with one line, failed under CI=true; and where the real corpus is looked for (ETW_DECODE_CORPUS
// first, else ../shared/corpus/real beside the repository).
import { afterEach, expect, test, vi } from 'vitest';
import { join, resolve } from 'node:path';
import { CORPUS_ENV, corpusLocation, findCorpus } from './helpers/corpus.js';
import { requirementMet } from './helpers/requirement.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

test('present: run, nothing said', () => {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.stubEnv('CI', 'true');
  expect(requirementMet(true, 'x missing', 'the x tests')).toBe(true);
  expect(log).not.toHaveBeenCalled();
});

test('missing: skipped, with exactly one line saying how to enable them', () => {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.stubEnv('CI', '');
  expect(requirementMet(false, 'x missing: set X=… to run them', 'the x tests')).toBe(false);
  expect(log.mock.calls).toEqual([['x missing: set X=… to run them']]);
});

test('missing under CI=true: the file fails, with the same line', () => {
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.stubEnv('CI', 'true');
  expect(() => requirementMet(false, 'x missing: set X=… to run them', 'the x tests')).toThrow('x missing: set X=… to run them (CI=true: the x tests must run)');
});

test('the corpus: ETW_DECODE_CORPUS when set, else shared/corpus/real beside the repository', () => {
  const root = resolve('/nowhere/etw-decode');
  vi.stubEnv(CORPUS_ENV, '');
  expect(corpusLocation(root)).toBe(join(resolve('/nowhere'), 'shared', 'corpus', 'real'));
  expect(findCorpus(root)).toBeNull();
  vi.stubEnv(CORPUS_ENV, 'relative/corpus');
  expect(corpusLocation(root)).toBe(resolve('relative/corpus'));
  vi.stubEnv(CORPUS_ENV, import.meta.dirname);
  expect(findCorpus(root)).toBe(import.meta.dirname);
});
