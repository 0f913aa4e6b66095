// The one loader of the real-file corpus and its independent expectations. The corpus is not in the
// repository: it is at $ETW_DECODE_CORPUS, else at ../shared/corpus/real beside the repository root. Tests
// that read it call `corpusTestsEnabled()` once and are skipped without it (one line says how to enable
// them), except under CI=true, where they fail; bench/ and fuzz/ find it with `findCorpus` and go on without.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, dirname, resolve } from 'node:path';
import type { KindRow } from '../../src/result/event-kinds.js';
import { requirementMet } from './requirement.js';

/** The environment variable that says where the corpus is (its `real` folder). */
export const CORPUS_ENV = 'ETW_DECODE_CORPUS';

/** Where the corpus is looked for: $ETW_DECODE_CORPUS, else shared/corpus/real beside the repository `root`. */
export function corpusLocation(root: string): string {
  const env = process.env[CORPUS_ENV];
  return env ? resolve(env) : join(root, '..', 'shared', 'corpus', 'real');
}

/** The corpus folder when it is there, else null. */
export function findCorpus(root: string): string | null {
  const dir = corpusLocation(root);
  return existsSync(dir) ? dir : null;
}

/** test/helpers → repository root */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The corpus folder of the tests (whether or not it is there). */
export const CORPUS_DIR = corpusLocation(ROOT);

export const MISSING_LINE = `real-file corpus not found at ${CORPUS_DIR}: set ${CORPUS_ENV}=/path/to/corpus/real or put it at ../shared/corpus/real beside the repository to run the tests that read it`;

/** Whether to run the tests that read the corpus; says why not (once) or throws under CI=true. */
export function corpusTestsEnabled(): boolean {
  return requirementMet(existsSync(CORPUS_DIR), MISSING_LINE, 'the real-corpus tests');
}

/** What `corpusFiles()` gives without the corpus: one name, so a `test.skipIf(!corpus).each(corpusFiles())` still shows as a skipped test. */
export const NO_CORPUS_FILE = '(real corpus not found)';

function corpusDir(): string {
  if (!existsSync(CORPUS_DIR)) throw new Error(MISSING_LINE);
  return CORPUS_DIR;
}

export interface ExpectedKind {
  headerType: string;
  id: string;
  name: string;
  version: string;
  detail: string;
  count: number;
  bytes: number;
}
export interface Expected {
  file: string;
  buffers: number;
  events: number;
  bufferSizes: Record<string, number>;
  bufferFlags: Record<string, number>;
  logfile: Record<string, number | string>;
  eventsByKind: ExpectedKind[];
}

/** Path of a corpus file. */
export function corpusPath(name: string): string {
  return join(corpusDir(), name);
}
/** The .etl files of the corpus, sorted; [NO_CORPUS_FILE] without it. */
export function corpusFiles(): string[] {
  if (!existsSync(CORPUS_DIR)) return [NO_CORPUS_FILE];
  return readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.etl')).sort();
}
export function readCorpus(name: string): Uint8Array {
  return new Uint8Array(readFileSync(corpusPath(name)));
}
export function readExpected(name: string): Expected {
  return JSON.parse(readFileSync(join(corpusDir(), 'expected', name.replace(/\.etl$/, '.json')), 'utf8')) as Expected;
}

/** A 64-bit integer field of the expected logfile header, exact (JSON.parse would round it to a double). */
export function expectedBigInt(name: string, key: string): bigint {
  const text = readFileSync(join(corpusDir(), 'expected', name.replace(/\.etl$/, '.json')), 'utf8');
  const m = new RegExp(`"${key.replace(/[()]/g, '\\$&')}":\\s*(-?\\d+)`).exec(text);
  if (!m) throw new Error(`${name}: no ${key}`);
  return BigInt(m[1]!);
}

/** The key the independent walker used for a kind row. */
export function expectedKey(k: ExpectedKind): string {
  return `${k.headerType}|${k.id}|${k.name.startsWith('id=') || k.name.startsWith('type=') ? k.name : ''}|${k.version}|${k.detail}`;
}
/** The same key for one of our rows. */
export function ourKey(k: KindRow): string {
  const v = `v${k.version}`;
  if (k.hookId !== undefined) return `${k.headerType}|0x${k.hookId.toString(16).toUpperCase().padStart(4, '0')}||${v}|`;
  if (k.eventId !== undefined) return `${k.headerType}|${k.provider}|id=${k.eventId}|${v}|op=${k.opcode} task=${k.task}${k.extended ? ' ext' : ''}`;
  if (k.eventType !== undefined) return `${k.headerType}|${k.provider}|type=${k.eventType}|${v}|`;
  return `${k.headerType}|?|${v}|`;
}
