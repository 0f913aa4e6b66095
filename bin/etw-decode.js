#!/usr/bin/env node
// etw-decode CLI launcher (the compiled CLI lives in dist/ after `npm install` / `npm run build`).
// main() turns every expected failure into one line and an exit code; whatever escapes it is a bug.
import { main } from '../dist/cli/main.js';

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
