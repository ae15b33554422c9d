// The drivers' request model (js/request-model.js) on the js/ sources: the
// same operations over fetch's headers and undici's (js/undici/headers.js),
// a new model for every change (the caller's headers never written), the
// facts of the core's idempotency rule, and the request stages of an attempt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestModel, keyFor, attemptOf, originOf } from '../../js/request-model.js';
import { DispatchRequest } from '../../js/undici/headers.js';

const c = { methods: new Set(['GET', 'PUT']), retryNonIdempotent: false, idempotencyKey: true, attemptHeader: 'x-attempt', max: 3 };

/** The same request in each form a driver holds it in. */
const forms = () => ({
  'fetch: a record': new RequestModel('post', { 'X-A': '1' }),
  'fetch: Headers': new RequestModel('post', new Headers({ 'x-a': '1' })),
  'undici: a record': new DispatchRequest('post', { 'X-A': '1' }),
  'undici: a flat array': new DispatchRequest('post', ['x-a', '1']),
});

test('get, has, set and delete read and write any form by name in any case; each change is a new model', () => {
  for (const [form, m] of Object.entries(forms())) {
    const before = JSON.stringify([...new Headers(m.headers instanceof Headers ? m.headers : Object.entries(m.headers))]);
    assert.equal(m.method, 'POST', form);
    assert.equal(m.get('x-A'), '1', form);
    assert.equal(m.has('X-a'), true, form);
    assert.equal(m.has('x-b'), false, form);
    const set = m.set('X-A', '2').set('x-b', '3');
    assert.ok(set instanceof m.constructor, `${form}: the same kind of model`);
    assert.deepEqual([set.get('x-a'), set.get('x-b'), set.method], ['2', '3', 'POST'], form);
    const gone = set.delete('x-a');
    assert.deepEqual([gone.has('x-a'), gone.get('x-b')], [false, '3'], form);
    assert.equal(m.get('x-a'), '1', `${form}: the model it came from is unchanged`);
    const after = JSON.stringify([...new Headers(m.headers instanceof Headers ? m.headers : Object.entries(m.headers))]);
    assert.equal(after, before, `${form}: the caller's headers are never written`);
  }
  assert.equal(new RequestModel(undefined, undefined).method, 'GET');
  assert.equal(new DispatchRequest('put', undefined).get('x'), null);
});

test("the idempotency facts and the generated key: the core's one rule, in every form", () => {
  for (const [form, m] of Object.entries(forms())) {
    assert.deepEqual(m.facts(c), { listed: false, keyed: false, option: false, any: false }, form);
    assert.match(String(keyFor(c, m)), /^[0-9a-f-]{36}$/, `${form}: a POST without a key gets one`);
    assert.equal(keyFor({ ...c, idempotencyKey: false }, m), undefined, form);
    const mine = m.set('Idempotency-Key', 'mine');
    assert.equal(mine.facts(c).keyed, true, form);
    assert.equal(keyFor(c, mine), undefined, `${form}: a key of its own is kept`);
    assert.equal(m.facts(c, 'k').keyed, true, `${form}: a generated key counts`);
  }
  assert.equal(keyFor(c, new DispatchRequest('GET', {})), undefined, 'a GET gets none');
  assert.equal(keyFor(c, new RequestModel('put', {})), undefined, 'nor a method of `methods`');
});

test('the request stages of attempt n: the attempt header, then the key, over the request’s own', () => {
  for (const [form, m] of Object.entries(forms())) {
    const sent = attemptOf(c, 'k', m.set('x-attempt', 'mine').set('idempotency-key', 'old'), 2);
    assert.deepEqual([sent.get('x-attempt'), sent.get('idempotency-key'), sent.get('x-a')], ['attempt=2; max=3', 'k', '1'], form);
    assert.equal(attemptOf({ max: Infinity }, undefined, m, 1), m, `${form}: no stage, the same model`);
    assert.equal(attemptOf({ max: Infinity, attemptHeader: 'x-attempt' }, undefined, m, 7).get('x-attempt'), 'attempt=7', form);
  }
  // (an odd flat array is left for undici to refuse, not mended)
  const odd = new DispatchRequest('GET', ['x-a', '1', 'x-b']);
  assert.deepEqual(attemptOf(c, 'k', odd, 1).headers, ['x-a', '1', 'x-b']);
});

test('originOf: a Request, a URL or a string, as URL origins; undefined without one', () => {
  assert.equal(originOf(new Request('http://A.example:80/x')), 'http://a.example');
  assert.equal(originOf(new URL('https://b.example:443/')), 'https://b.example');
  assert.equal(originOf('http://c.example:8080/p?q'), 'http://c.example:8080');
  assert.equal(originOf('/relative'), undefined);
  assert.equal(originOf(undefined), undefined);
});
