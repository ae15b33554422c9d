// The one retry loop (js/engine/loop.js `drive`) with stub jobs and lanes,
// from the sources (no build of js/ needed: the root package.json maps
// `#load` to js/load/dev.js). What it checks: the order of the steps (pass,
// before, attempt, judge, after), what onRetry and onDone are told, and how
// a call ends when a step throws.
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Call, drive } from '../../js/engine/loop.js';
import { install } from './clock.mjs';

/** @type {ReturnType<typeof install>} */
let clock;
beforeEach(() => (clock = install()));
afterEach(() => clock.off());

/** Call options with no schedule, deadline or hook (stub lanes do not use the schedule). */
const opts = (more = {}) => ({ rec: [], seeded: false, maxElapsedMs: Infinity, ...more });

/**
 * A job and a lane that log each step, as `name n` (n = attempts sent so far);
 * `outcomes[i]` is attempt i+1's outcome, `verdicts[i]` its judge's answer,
 * `ends[i]` what the lane's `after` decides.
 */
function stubs({ outcomes, verdicts, ends = verdicts, delayMs = 0 }) {
  const log = [];
  /** @type {import('../../js/engine/loop.js').Job} */
  const job = {
    async attempt(call, n) {
      log.push(`attempt ${n}`);
      assert.equal(n, call.n, 'the attempt’s number is the call’s count');
      return outcomes[n - 1];
    },
    async judge(call, o) {
      log.push(`judge ${call.n}`);
      assert.deepEqual(o, outcomes[call.n - 1], 'the judge gets the attempt’s outcome');
      assert.ok(Object.isFrozen(o), 'frozen: no step writes into it');
      return { why: verdicts[call.n - 1], hurt: false };
    },
    async before(call, o) {
      log.push(`before ${call.n}`);
      assert.deepEqual(o, outcomes[call.n - 1], 'beforeRetry gets the last outcome');
    },
  };
  /** @type {import('../../js/engine/loop.js').Lane} */
  const lane = {
    async pass(call) {
      log.push(`pass ${call.n}`);
    },
    after(call, v, o) {
      log.push(`after ${call.n} ${JSON.stringify(v.why)}`);
      assert.deepEqual(o, outcomes[call.n - 1]);
      return { why: ends[call.n - 1], delayMs };
    },
    cancel() {
      log.push('cancel');
    },
  };
  return { log, job, lane };
}

test('the steps run in order: pass, (before), attempt, judge, after; then onRetry; onDone last', async () => {
  const [e1, e2] = [new Error('one'), new Error('two')];
  const outcomes = [
    { failed: true, error: e1 },
    { failed: true, error: e2 },
    { failed: false, value: 'v' },
  ];
  const { log, job, lane } = stubs({ outcomes, verdicts: ['', '', 'success'], delayMs: 7 });
  const c = opts({ onRetry: (i) => log.push(`onRetry ${i.attempt}`), onDone: (i) => log.push(`onDone ${i.reason}`) });
  const v = await clock.run(drive(new Call(c, undefined), job, lane));
  assert.equal(v, 'v', 'resolves with the last outcome’s value');
  assert.deepEqual(log, [
    'pass 0',
    'attempt 1',
    'judge 1',
    'after 1 ""',
    'onRetry 1',
    'pass 1',
    'before 1',
    'attempt 2',
    'judge 2',
    'after 2 ""',
    'onRetry 2',
    'pass 2',
    'before 2',
    'attempt 3',
    'judge 3',
    'after 3 "success"',
    'onDone success',
  ]);
});

test("the lane's answer ends the call, not the judge's: it rejects with the last error", async () => {
  const e = new Error('down');
  const outcomes = [{ failed: true, error: e }];
  // the judge wants another attempt; the lane says no (a budget, a deadline)
  const { log, job, lane } = stubs({ outcomes, verdicts: [''], ends: ['budget'] });
  let done;
  await assert.rejects(clock.run(drive(new Call(opts({ onDone: (i) => (done = i) }), undefined), job, lane)), (x) => x === e);
  assert.deepEqual(log, ['pass 0', 'attempt 1', 'judge 1', 'after 1 ""']);
  assert.equal(done.reason, 'budget');
  assert.equal(done.attempts, 1);
});

test('job.result shapes what the call resolves with; without it, the response, else the value', async () => {
  const res = new Response('x');
  const one = (o, extra = {}) => ({ ...stubs({ outcomes: [o], verdicts: ['success'] }).job, ...extra });
  const lane = stubs({ outcomes: [], verdicts: ['success'] }).lane;
  lane.after = () => ({ why: 'success', delayMs: 0 });
  assert.equal(await clock.run(drive(new Call(opts(), undefined), one({ failed: false, res, value: 1 }), lane)), res);
  assert.equal(await clock.run(drive(new Call(opts(), undefined), one({ failed: false, value: 1 }), lane)), 1);
  const shaped = one({ failed: false, value: 1 }, { result: (o) => ({ got: o.value }) });
  assert.deepEqual(await clock.run(drive(new Call(opts(), undefined), shaped, lane)), { got: 1 });
});

test('onRetry and onDone are told the attempt, the wait, the status, the error, the server’s wait and the response', async () => {
  const e = new Error('reset');
  const r503 = new Response('busy', { status: 503 });
  const r200 = new Response('ok');
  const outcomes = [
    { failed: true, error: e, network: true },
    { failed: false, res: r503, status: 503, hintMs: 2000 },
    { failed: false, res: r200, status: 200 },
  ];
  const { job, lane } = stubs({ outcomes, verdicts: ['', '', 'success'], delayMs: 250 });
  // (the server's wait as the lane honoured it: what onRetry tells)
  const after = lane.after;
  lane.after = (call, v, o) => ({ ...after(call, v, o), hintMs: o.hintMs });
  lane.pass = (call, delayMs) => new Promise((r) => setTimeout(r, call.n ? delayMs : 0));
  const retries = [];
  let done;
  const c = opts({ onRetry: (i) => retries.push(i), onDone: (i) => (done = i) });
  assert.equal(await clock.run(drive(new Call(c, undefined), job, lane)), r200);
  assert.deepEqual(retries, [
    { attempt: 1, delayMs: 250, status: undefined, error: e, retryAfterMs: undefined, response: undefined },
    { attempt: 2, delayMs: 250, status: 503, error: undefined, retryAfterMs: 2000, response: r503 },
  ]);
  assert.deepEqual(done, { attempts: 3, elapsedMs: 500, reason: 'success', status: 200, error: undefined });
  assert.equal(r503.bodyUsed, true, 'a response not returned is let go (its body cancelled)');
  assert.equal(r200.bodyUsed, false, 'the one returned is not');
});

test('onDone is told the status of an answer that is not retried', async () => {
  const r = new Response('no', { status: 404 });
  const outcomes = [{ failed: false, res: r, status: 404 }];
  const { job, lane } = stubs({ outcomes, verdicts: ['not-retryable'] });
  let done;
  // a 404 is an answer, not a failure: the call resolves with it
  assert.equal(await clock.run(drive(new Call(opts({ onDone: (i) => (done = i) }), undefined), job, lane)), r);
  assert.deepEqual(done, { attempts: 1, elapsedMs: 0, reason: 'not-retryable', status: 404, error: undefined });
});

test("a decision hook that throws ends the call with what it threw ('hook-error'); the lane is cancelled", async () => {
  const boom = new Error('beforeRetry threw');
  const outcomes = [{ failed: true, error: new Error('down') }];
  const { log, job, lane } = stubs({ outcomes, verdicts: [''] });
  job.before = async () => {
    log.push('before');
    throw boom;
  };
  let done;
  await assert.rejects(clock.run(drive(new Call(opts({ onDone: (i) => (done = i) }), undefined), job, lane)), (x) => x === boom);
  assert.deepEqual(log, ['pass 0', 'attempt 1', 'judge 1', 'after 1 ""', 'pass 1', 'before', 'cancel']);
  assert.equal(done.reason, 'hook-error');
  assert.equal(done.error, boom);
  assert.equal(done.attempts, 1, 'the attempt beforeRetry refused was not sent');
});

test('a judge that throws is a hook error too (shouldRetry)', async () => {
  const boom = new TypeError('shouldRetry must return a boolean or undefined');
  const outcomes = [{ failed: true, error: new Error('down') }];
  const { log, job, lane } = stubs({ outcomes, verdicts: [''] });
  job.judge = async () => {
    throw boom;
  };
  let done;
  await assert.rejects(clock.run(drive(new Call(opts({ onDone: (i) => (done = i) }), undefined), job, lane)), (x) => x === boom);
  assert.deepEqual(log, ['pass 0', 'attempt 1', 'cancel']);
  assert.equal(done.reason, 'hook-error');
});

test('a lane that refuses to pass ends the call with its own reason (lane.why) and error', async () => {
  const refused = new Error('circuit open');
  const { job, lane } = stubs({ outcomes: [], verdicts: [] });
  lane.why = 'circuit-open';
  lane.pass = async () => {
    throw refused;
  };
  let done;
  const sent = [];
  job.attempt = async (call) => (sent.push(call.n), { failed: false });
  await assert.rejects(clock.run(drive(new Call(opts({ onDone: (i) => (done = i) }), undefined), job, lane)), (x) => x === refused);
  assert.deepEqual(sent, [], 'nothing is sent');
  assert.equal(done.reason, 'circuit-open');
  assert.equal(done.attempts, 0);
});

test('an observer hook that throws changes nothing (written to the console)', async (t) => {
  const errors = t.mock.method(console, 'error', () => {});
  const outcomes = [
    { failed: true, error: new Error('x') },
    { failed: false, value: 2 },
  ];
  const { job, lane } = stubs({ outcomes, verdicts: ['', 'success'] });
  const hook = () => {
    throw new Error('observer');
  };
  assert.equal(await clock.run(drive(new Call(opts({ onRetry: hook, onDone: hook }), undefined), job, lane)), 2);
  assert.equal(errors.mock.callCount(), 2, 'both throws are reported');
});

test('the budget is paid into once per call, at its start', async () => {
  const deposits = [];
  const budget = { deposit: (now) => deposits.push(now), withdraw: () => true };
  const outcomes = [
    { failed: true, error: new Error('x') },
    { failed: false, value: 1 },
  ];
  const { job, lane } = stubs({ outcomes, verdicts: ['', 'success'] });
  await clock.tick(5);
  const call = new Call(opts({ budget }), undefined);
  await clock.run(drive(call, job, lane));
  assert.deepEqual(deposits, [call.start]);
  assert.equal(clock.now(), 5);
});

test('telemetry: asked once per call with it and its job; its observer runs each attempt and sees each step', async () => {
  const outcomes = [
    { failed: true, error: new Error('one') },
    { failed: false, value: 'v' },
  ];
  const { log, job, lane } = stubs({ outcomes, verdicts: ['', 'success'] });
  const asked = [];
  const telemetry = (call, j) => {
    asked.push([call, j]);
    return {
      attempt: (n, run) => (log.push(`tap ${n}`), run()),
      attempted: (n, o) => log.push(`tapped ${n} ${o.failed}`),
      retry: (i) => log.push(`tap retry ${i.attempt}`),
      done: (i) => log.push(`tap done ${i.reason}`),
    };
  };
  const call = new Call(opts({ telemetry }), undefined);
  assert.equal(await clock.run(drive(call, job, lane)), 'v');
  assert.deepEqual(asked, [[call, job]]);
  assert.deepEqual(
    log.filter((l) => /^(tap|attempt|judge)/.test(l)),
    [
      'tap 1',
      'attempt 1',
      'tapped 1 true',
      'judge 1',
      'tap retry 1',
      'tap 2',
      'attempt 2',
      'tapped 2 false',
      'judge 2',
      'tap done success',
    ],
  );
  // (undefined: no observer)
  const plain = stubs({ outcomes: [{ failed: false, value: 1 }], verdicts: ['success'] });
  assert.equal(await clock.run(drive(new Call(opts({ telemetry: () => undefined }), undefined), plain.job, plain.lane)), 1);
});

test('telemetry never changes an outcome: an observer that throws anywhere, or never runs the attempt, is reported', async (t) => {
  const errors = t.mock.method(console, 'error', () => {});
  const boom = () => {
    throw new Error('tracer');
  };
  const taps = [
    () => {
      throw new Error('made');
    },
    () => ({ attempt: boom, attempted: boom, retry: boom, done: boom }),
    () => ({ attempt: () => {} }), // (never runs it: the engine does)
    () => ({ attempt: (_n, run) => (run(), run(), boom()) }), // (runs it twice: once is sent)
  ];
  for (const telemetry of taps) {
    const outcomes = [
      { failed: true, error: new Error('x') },
      { failed: false, value: 7 },
    ];
    const { log, job, lane } = stubs({ outcomes, verdicts: ['', 'success'] });
    let done;
    const c = opts({ telemetry, onDone: (i) => (done = i) });
    assert.equal(await clock.run(drive(new Call(c, undefined), job, lane)), 7);
    assert.deepEqual(
      log.filter((l) => l.startsWith('attempt')),
      ['attempt 1', 'attempt 2'],
      'each attempt sent once',
    );
    assert.equal(done.reason, 'success');
  }
  assert.ok(errors.mock.callCount() >= 5, 'what the observers threw is reported');
});

test('a call goes on from an outcome met after it answered: the lane decides on it, onRetry is told, onDone is not', async () => {
  const broke = Object.freeze({ failed: true, error: new Error('cut'), network: true });
  const outcomes = [{ failed: false, value: 'rest' }];
  const log = [];
  const job = {
    async attempt(_call, n) {
      log.push(`attempt ${n}`);
      return outcomes[0];
    },
    judge: () => ({ why: 'success', hurt: false }),
  };
  const lane = {
    pass: async (_call, delayMs) => void log.push(`pass ${delayMs}`),
    after(_call, v, o) {
      log.push(`after ${JSON.stringify(v)} ${o === broke}`);
      return v.why ? { why: v.why, delayMs: 0 } : { why: '', delayMs: 40 };
    },
  };
  const retries = [];
  let dones = 0;
  const call = new Call(opts({ onRetry: (i) => retries.push(i), onDone: () => dones++ }), undefined);
  assert.equal(await clock.run(drive(call, job, lane, broke)), 'rest');
  assert.deepEqual(log, ['after {"why":"","hurt":true} true', 'pass 40', 'attempt 1', 'after {"why":"success","hurt":false} false']);
  assert.deepEqual(
    retries.map((i) => [i.attempt, i.delayMs, i.error]),
    [[0, 40, broke.error]],
  );
  assert.equal(dones, 0, 'onDone was told when the call answered');
});
