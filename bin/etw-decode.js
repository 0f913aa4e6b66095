#!/usr/bin/env node
// etw-decode CLI launcher (the compiled CLI lives in dist/ after `npm install` / `npm run build`, bundled
// into one module by scripts/bundle-cli.mjs: it starts faster than dist/cli.js and its ~40 imports).
// main() turns every expected failure into one line and an exit code; whatever escapes it is a bug.
import { main } from '../dist/cli.bundle.js';

function internalError(err) {
  try {
    process.stderr.write(`etw-decode: internal error: ${err && err.stack ? err.stack : String(err)}\n`);
  } finally {
    process.exit(70);
  }
}
process.on('uncaughtException', internalError);
process.on('unhandledRejection', internalError);

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, internalError);
