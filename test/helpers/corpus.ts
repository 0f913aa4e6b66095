// The one loader of the real-file corpus and its independent expectations: ../shared/corpus/real, next to
// the repository root (for a checkout at /work/<repo> that is /work/shared/corpus/real).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';
import type { KindRow } from '../../src/result/event-kinds.js';

const here = dirname(fileURLToPath(import.meta.url));
/** test/helpers → repository root → its parent → shared/corpus/real */
export const CORPUS_DIR = join(here, '..', '..', '..', 'shared', 'corpus', 'real');

function corpusDir(): string {
  if (!existsSync(CORPUS_DIR)) throw new Error(`real-file corpus not found at ${CORPUS_DIR} (expected ../shared/corpus/real next to the repository)`);
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
export function corpusFiles(): string[] {
  return readdirSync(corpusDir()).filter((f) => f.endsWith('.etl')).sort();
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
