// Every real file of the corpus (test/helpers/corpus.ts says where) reproduces the independent walker's counts exactly:
// buffers, events, and every per-kind count and byte total — with both engines, in memory and from disk.
import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { decodeSync, decodeFile } from '../src/node.js';
import { CORPUS_DIR, corpusFiles, corpusTestsEnabled, expectedBigInt, expectedKey, ourKey, readCorpus, readExpected } from './helpers/corpus.js';

const corpus = corpusTestsEnabled();
const files = corpusFiles();

test.skipIf(!corpus)('the corpus is there', () => {
  expect(files.length).toBe(9);
});

describe.each(['wasm', 'reference'] as const)('%s engine', (engine) => {
  test.skipIf(!corpus).each(files)('%s', (name) => {
    const exp = readExpected(name);
    const { summary, info, buffers } = decodeSync(readCorpus(name), { engine });
    expect(summary.buffers).toBe(exp.buffers);
    // every buffer: sizes and flags as the independent walker saw them
    const histogram = (keys: string[]) => keys.reduce<Record<string, number>>((h, k) => ((h[k] = (h[k] ?? 0) + 1), h), {});
    expect(histogram(buffers.toArray().map((b) => '0x' + b.size.toString(16)))).toEqual(exp.bufferSizes);
    const FLAG_NAMES: [number, string][] = [[1, 'FLUSH_MARKER'], [2, 'EVENTS_LOST'], [4, 'BUFFER_LOST'], [0x20, 'PROC_INDEX'], [0x40, 'COMPRESSED']];
    expect(histogram(buffers.toArray().map((b) => FLAG_NAMES.filter(([bit]) => b.flags & bit).map(([, n]) => n).join('|')))).toEqual(exp.bufferFlags);
    expect(summary.diagnostics['logfileEventsLost']).toBe(exp.logfile['EventsLost']);
    expect(summary.diagnostics['logfileBuffersLost']).toBe(exp.logfile['BuffersLost']);
    expect(summary.events).toBe(exp.events);
    const ours = new Map(summary.eventsByKind.map((k) => [ourKey(k), [k.count, k.bytes]]));
    const theirs = new Map(exp.eventsByKind.map((k) => [expectedKey(k), [k.count, k.bytes]]));
    expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(theirs));
    // nothing corrupt in these files
    expect(summary.diagnostics['buffersCorrupt']).toBe(0);
    expect(summary.diagnostics['buffersCompressedUndecoded']).toBe(0);
    expect(summary.diagnostics['buffersTruncatedWalk']).toBe(0);
    expect(summary.issues).toEqual([]);
    // the logfile header
    const lf = exp.logfile;
    expect(info).not.toBeNull();
    expect(info!.bufferSize).toBe(lf['BufferSize']);
    expect(info!.build).toBe(lf['ProviderVersion']);
    expect(info!.numberOfProcessors).toBe(lf['NumberOfProcessors']);
    expect(info!.osVersion).toBe(lf['OSVersion']);
    expect(info!.pointerSize).toBe(lf['PointerSize']);
    expect(info!.perfFreq).toBe(expectedBigInt(name, 'PerfFreq'));
    expect(info!.startTime).toBe(expectedBigInt(name, 'StartTime'));
    expect(info!.endTime).toBe(expectedBigInt(name, 'EndTime'));
    expect(info!.bootTime).toBe(expectedBigInt(name, 'BootTime'));
    expect(info!.clockType).toBe(lf['ReservedFlags(ClockType)']);
    expect(info!.cpuSpeedInMHz).toBe(lf['CpuSpeedInMHz']);
    expect(info!.eventsLost).toBe(lf['EventsLost']);
    expect(info!.buffersLost).toBe(lf['BuffersLost']);
    expect(info!.timerResolution).toBe(lf['TimerResolution']);
    expect(info!.logFileMode).toBe(parseInt(String(lf['LogFileMode']), 16));
    expect(info!.loggerName).toBe(lf['LoggerName']);
    expect(info!.logFileName).toBe(lf['LogFileName']);
  });
});

test.skipIf(!corpus).each(files)('file API (streaming, small window) = in-memory API: %s', async (name) => {
  const mem = decodeSync(readCorpus(name));
  const file = await decodeFile(join(CORPUS_DIR, name), { windowBytes: 1 << 16 });
  expect(file.summary).toEqual(mem.summary);
});
