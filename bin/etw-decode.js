#!/usr/bin/env node
// etw-decode CLI launcher (the compiled CLI lives in dist/ after `npm install` / `npm run build`).
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`etw-decode: ${err && err.stack ? err.stack : String(err)}\n`);
    process.exitCode = 70;
  },
);
