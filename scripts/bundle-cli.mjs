// Bundles the command line (dist/cli.js and everything it imports, commander included) into one module,
// dist/cli.bundle.js, which bin/etw-decode.js loads: resolving and compiling ~40 separate modules cost
// `etw-decode` ~40 ms of CPU at every start (measured with `etw-decode --version`: 140 → 100 ms, of
// which 60 ms is Node itself). Run by `npm run build` after tsc.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  entryPoints: [join(root, 'dist/cli.js')],
  outfile: join(root, 'dist/cli.bundle.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  // commander is CommonJS: its require() calls of Node built-ins need a require in the ES module
  banner: { js: "import { createRequire as __etwCreateRequire } from 'node:module'; const require = __etwCreateRequire(import.meta.url);" },
});
