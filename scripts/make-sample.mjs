// Regenerates samples/sample.etl, the small trace `npm start` decodes: a simulated schedule (the writer's
// generateSampleTrace: 4 CPUs, Windows 10 2004 (build 19041), ~12 processes and ~56 threads with names,
// CSwitch events on some CPUs and compact batches on the others, ReadyThread wake-ups, Thread/Process
// rundowns and lifetimes, SpinLock events and noise of every header kind).
// Deterministic: the same writer version produces the same bytes. Run after `npm run build`.
import { writeFileSync, mkdirSync } from 'node:fs';
import { generateSampleTrace } from '../dist/writer/index.js';

const trace = generateSampleTrace();
mkdirSync(new URL('../samples/', import.meta.url), { recursive: true });
writeFileSync(new URL('../samples/sample.etl', import.meta.url), trace.bytes);
console.log(`samples/sample.etl: ${trace.bytes.length} bytes, ${trace.buffers.length} buffers, ${trace.events} events`);
