// The package version, written into outputs (the traces table's `decoder`, the CLI's --version).
// test/package.test.ts checks it against package.json.
export const VERSION = '0.1.0';
