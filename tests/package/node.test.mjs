// The package in Node 20, imported by its name through the `exports` map
// (the "node" condition), as ESM and through require().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { Backoff } from 'wasm-backoff';
import { goldenFailures, validationFailures, semanticsFailures } from './checks.mjs';

const golden = JSON.parse(readFileSync(new URL('../../core/tests/golden/seeded.json', import.meta.url), 'utf8'));

test('import needs no init call and gives the same schedules as native Rust (golden file)', () => {
  assert.deepEqual(goldenFailures(Backoff, golden), []);
});

test('require() gets the same class, initialised', () => {
  const require = createRequire(import.meta.url);
  const cjs = require('wasm-backoff');
  assert.equal(cjs.Backoff, Backoff);
  assert.equal(new cjs.Backoff({ preset: 'flume' }).next(), 250);
});

test('bad options throw TypeError/RangeError naming the option, and the module keeps working', () => {
  assert.deepEqual(validationFailures(Backoff), []);
});

test('attempts, reset, counters and sampling behave as documented', () => {
  assert.deepEqual(semanticsFailures(Backoff), []);
});
