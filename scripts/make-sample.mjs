// Regenerates samples/sample.etl, the small trace `npm start` decodes: 4 CPUs, Windows 10 2004 (build 19041),
// CSwitch v4 events, compact context-switch batches, SpinLock events and noise of every header kind.
// Deterministic: the same writer version produces the same bytes. Run after `npm run build`.
import { writeFileSync, mkdirSync } from 'node:fs';
import { generateMixedTrace } from '../dist/writer/index.js';

const trace = generateMixedTrace({ seed: 2026, targetBytes: 256 * 1024, cpus: 4, bufferSize: 0x4000 });
mkdirSync(new URL('../samples/', import.meta.url), { recursive: true });
writeFileSync(new URL('../samples/sample.etl', import.meta.url), trace.bytes);
console.log(`samples/sample.etl: ${trace.bytes.length} bytes, ${trace.buffers.length} buffers, ${trace.events} events`);
