// Debian's Chromium as the tests launch it (through playwright-core, never a
// downloaded browser), with the flags this sandbox needs; and the browser
// scripts/run-tests.mjs shares between the files it runs (a Playwright
// browser server: one launch, not one per file), whose
// address it hands them in WASM_BACKOFF_BROWSER. No node:test here: the
// runner imports it too.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The shared browser's address (a ws:// URL), when a runner shares one. */
export const SHARED = process.env.WASM_BACKOFF_BROWSER;

/** The options of chromium.launch() and chromium.launchServer(). */
export const launchOptions = () => ({
  executablePath: CHROMIUM,
  args: [
    '--no-sandbox',
    '--headless',
    '--disable-gpu',
    '--disable-quic',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});
