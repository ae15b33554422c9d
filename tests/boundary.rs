#![cfg(not(target_arch = "wasm32"))]
//! The JS boundary, natively: the options record under arbitrary f64 input
//! never panics and only yields valid configs (the fuzz target's body, under
//! proptest); fields decode as the JS side means them; the exported
//! functions behave through handles and the result record exactly as
//! js/*.js uses them. (The messages need no test here: JS gets them
//! generated from `schema::Error::message`.)

mod common {
    pub mod fuzz_body;
}

use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use wasm_backoff::calc::{self, decode};
use wasm_backoff::io::{answered, set_record};
use wasm_backoff::schema::{Error, Field, RECORD_LEN};
use wasm_backoff_core::{Config, Jitter, Strategy};

const NAN: f64 = f64::NAN;

/// The records are the module's statics (one wasm thread); natively the
/// tests that use them take turns.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn f64_any() -> impl proptest::strategy::Strategy<Value = f64> {
    prop_oneof![
        Just(NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(0.0),
        Just(1.0),
        -10.0..20.0f64,
        any::<f64>(),
        (0u32..12).prop_map(f64::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn fuzz_body_holds_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..(RECORD_LEN * 8 + 8))) {
        common::fuzz_body::check(&data);
    }

    #[test]
    fn fuzz_body_holds_on_structured_fields(fields in proptest::collection::vec(f64_any(), RECORD_LEN), tail in proptest::collection::vec(any::<u8>(), 5)) {
        let mut data: Vec<u8> = fields.iter().flat_map(|f| f.to_le_bytes()).collect();
        data.extend(tail);
        common::fuzz_body::check(&data);
    }
}

/// A record with every field NaN ("not given") except `set`; seed 1 unless set.
fn rec(set: &[(Field, f64)]) -> [f64; RECORD_LEN] {
    let mut r = [NAN; RECORD_LEN];
    r[Field::Seed as usize] = 1.0;
    for &(f, v) in set {
        r[f as usize] = v;
    }
    r
}

fn dec(set: &[(Field, f64)]) -> Result<Config, Error> {
    decode(&rec(set)).map(|(c, _)| c)
}

#[test]
fn error_codes() {
    assert!(dec(&[(Field::BaseMs, 10.0)]).is_ok());
    assert_eq!(dec(&[(Field::BaseMs, -1.0)]).err(), Some(Error::BaseMs));
    assert_eq!(
        dec(&[(Field::Seed, NAN)]).err(),
        Some(Error::Seed),
        "the JS side always passes a seed"
    );
    assert_eq!(dec(&[(Field::Seed, 0.5)]).err(), Some(Error::Seed));
    assert_eq!(
        dec(&[(Field::Seed, 9_007_199_254_740_992.0)]).err(),
        Some(Error::Seed)
    );
    assert!(dec(&[(Field::Seed, -9_007_199_254_740_991.0)]).is_ok());
    // hadoop (index 8) with maxAttempts 64
    assert_eq!(
        dec(&[(Field::Preset, 8.0), (Field::MaxAttempts, 64.0)]).err(),
        Some(Error::HadoopMaxAttempts)
    );
    for bad in [2.5, 0.0, -1.0, f64::NEG_INFINITY] {
        assert_eq!(
            dec(&[(Field::MaxAttempts, bad)]).err(),
            Some(Error::MaxAttempts),
            "{bad}"
        );
    }
    let cfg = dec(&[(Field::Preset, 1.0), (Field::MaxAttempts, f64::INFINITY)]).unwrap();
    assert_eq!(
        cfg.max_attempts, None,
        "Infinity lifts the aws preset's limit"
    );
}

#[test]
fn documented_ranges_hold_for_huge_integers() {
    // The .d.ts says "an integer >= 1": 2^53 and beyond are integers too
    // (they saturate to the largest count the core holds, as Infinity nearly does).
    for big in [9_007_199_254_740_992.0, 1e300] {
        let cfg = dec(&[(Field::MaxAttempts, big)]).unwrap();
        assert_eq!(cfg.max_attempts, Some(u32::MAX), "{big}");
    }
    assert_eq!(
        calc::count(4_294_967_296.0, 1.0, Error::MaxFailures),
        Ok(u32::MAX)
    );
    assert_eq!(
        calc::count(1.5, 1.0, Error::MaxFailures),
        Err(Error::MaxFailures)
    );
    assert_eq!(dec(&[(Field::Ceiling, 1024.0)]).err(), Some(Error::Ceiling));
    assert_eq!(dec(&[(Field::Ceiling, 1e300)]).err(), Some(Error::Ceiling));
}

#[test]
fn strategy_without_preset_picks_its_natural_jitter() {
    let cfg = dec(&[(Field::Strategy, 4.0)]).unwrap();
    assert_eq!(
        (cfg.strategy, cfg.jitter, cfg.factor),
        (Strategy::Decorrelated, Jitter::None, 3.0)
    );
    let cfg = dec(&[(Field::Strategy, 2.0)]).unwrap();
    assert_eq!((cfg.strategy, cfg.jitter), (Strategy::Linear, Jitter::Full));
}

#[test]
fn fallback_attempts_apply_only_without_a_limit() {
    let attempts = |set: &[(Field, f64)]| {
        let mut all = vec![(Field::FallbackAttempts, 5.0)];
        all.extend_from_slice(set);
        dec(&all).unwrap().max_attempts
    };
    assert_eq!(attempts(&[]), Some(5), "no options: the fallback");
    assert_eq!(
        attempts(&[(Field::Preset, 1.0)]),
        Some(3),
        "aws keeps its 3"
    );
    assert_eq!(
        attempts(&[(Field::Preset, 0.0)]),
        Some(5),
        "gcs has none: the fallback"
    );
    assert_eq!(
        attempts(&[(Field::MaxAttempts, 2.0)]),
        Some(2),
        "explicit wins"
    );
    assert_eq!(
        attempts(&[(Field::MaxAttempts, f64::INFINITY)]),
        None,
        "explicit Infinity lifts it"
    );
}

#[test]
fn handles_step_give_up_and_free() {
    let _t = turn();
    // flume (index 7), 3 attempts: 250, 500, then -1 (give up) for ever.
    set_record(rec(&[(Field::Preset, 7.0), (Field::MaxAttempts, 3.0)]));
    let h = calc::backoff_new();
    assert!(h > 0.0);
    let h = h as usize;
    let steps: Vec<f64> = (0..4)
        .map(|_| calc::backoff_next(h, f64::NAN, f64::NAN))
        .collect();
    assert_eq!(steps, [250.0, 500.0, -1.0, -1.0]);
    calc::backoff_counters(h);
    assert_eq!(answered()[..4], [2.0, 2.0, 0.0, 750.0]);
    calc::backoff_reset(h);
    calc::backoff_counters(h);
    assert_eq!(answered()[..3], [0.0, 2.0, 1.0]);
    assert_eq!(calc::backoff_next(h, f64::NAN, f64::NAN), 250.0);
    // A freed slot is the next one handed out (O(1) reuse).
    calc::backoff_free(h);
    set_record(rec(&[(Field::Preset, 7.0)]));
    assert_eq!(calc::backoff_new() as usize, h);
    calc::backoff_free(h);
}

#[test]
fn rejected_options_answer_minus_the_code_and_the_module_goes_on() {
    let _t = turn();
    set_record(rec(&[(Field::BaseMs, -5.0)]));
    assert_eq!(calc::backoff_new(), -(Error::BaseMs.code() as f64));
    set_record(rec(&[(Field::Seed, 0.5)]));
    assert_eq!(calc::backoff_new(), -(Error::Seed.code() as f64));
    set_record(rec(&[(Field::Preset, 7.0)]));
    let h = calc::backoff_new() as usize;
    assert_eq!(calc::backoff_next(h, f64::NAN, f64::NAN), 250.0);
    calc::backoff_free(h);
}

#[test]
fn hint_waits_at_least_the_server_time_with_jitter_above() {
    let _t = turn();
    set_record(rec(&[(Field::Seed, 3.0)]));
    let h = calc::backoff_new() as usize;
    let w = calc::backoff_next(h, 1000.0, f64::NAN);
    assert!(
        (1000.0..1100.0).contains(&w),
        "{w}: the first delay (< 100 ms) lifted to the hint and a jitter above"
    );
    calc::backoff_free(h);
}

#[test]
fn draws_fill_the_scratch_buffer() {
    let _t = turn();
    use wasm_backoff::io::{CHUNK, scratch};
    set_record(rec(&[(Field::Seed, 99.0)]));
    let h = calc::backoff_new() as usize;
    calc::backoff_draws(h, 3, CHUNK as u32 + 10); // clamped to CHUNK
    // SAFETY: natively the static lives in this process; read right after.
    let xs = unsafe { core::slice::from_raw_parts(scratch(), CHUNK) };
    assert!(
        xs.iter().all(|&d| (0.0..400.0).contains(&d)),
        "full jitter on 400 ms"
    );
    assert!(xs.iter().any(|&d| d > 300.0) && xs.iter().any(|&d| d < 100.0));
    calc::backoff_free(h);
}

#[test]
fn queue_transitions_on_numeric_records() {
    use wasm_backoff::queue::*;
    let _t = turn();
    const INF: f64 = f64::INFINITY;
    const R: f64 = 1000.0; // a retention of 1 s
    // base 100 ms, no jitter (index 0); lease 1000 ms, 2 failures.
    let policy = rec(&[
        (Field::BaseMs, 100.0),
        (Field::Jitter, 0.0),
        (Field::LeaseMs, 1000.0),
        (Field::MaxFailures, 2.0),
    ]);
    set_record(policy);
    assert_eq!(queue_check(INF), 0.0);
    // due: pending and due → claim (1); before next_attempt_at → wait (0).
    assert_eq!(queue_due(0, 0.0, 50.0, 0.0, 7.0, 0.0, INF, 50.0), 1);
    assert_eq!(queue_due(0, 0.0, 50.0, 0.0, 7.0, 0.0, INF, 49.0), 0);
    // claim → processing, complete_by = now + lease.
    assert_eq!(queue_claim(0, 0.0, 50.0, 0.0, 7.0, 0.0, INF, 60.0), 1);
    assert_eq!(answered()[..4], [1.0, 0.0, 50.0, 1060.0]);
    // complete within the lease → processed; after it, refused.
    assert_eq!(
        queue_complete(1, 0.0, 50.0, 1060.0, 7.0, 0.0, INF, 1060.0),
        1
    );
    assert_eq!(answered()[0], 2.0);
    assert_eq!(
        queue_complete(1, 0.0, 50.0, 1060.0, 7.0, 0.0, INF, 1061.0),
        0
    );
    // fail → pending after 100 ms (base, no jitter).
    assert_eq!(queue_fail(1, 0.0, 50.0, 1060.0, 7.0, 0.0, INF, 500.0), 1);
    assert_eq!(answered()[..4], [0.0, 1.0, 600.0, 1060.0]);
    // the second failure of 2 → error; permanent failure → error at once.
    assert_eq!(queue_fail(1, 1.0, 50.0, 1060.0, 7.0, 0.0, INF, 500.0), 1);
    assert_eq!(answered()[..2], [3.0, 2.0]);
    assert_eq!(
        queue_fail_permanently(1, 0.0, 50.0, 1060.0, 7.0, 0.0, INF, 500.0),
        1
    );
    assert_eq!(answered()[..2], [3.0, 1.0]);
    // sweep: due code 2 past complete_by, then back to pending.
    assert_eq!(queue_due(1, 0.0, 50.0, 1060.0, 7.0, 0.0, INF, 1061.0), 2);
    assert_eq!(queue_sweep(1, 0.0, 50.0, 1060.0, 7.0, 0.0, INF, 1061.0), 1);
    assert_eq!(answered()[..4], [0.0, 1.0, 1161.0, 1060.0]);
    assert_eq!(
        queue_sweep(1, 0.0, 50.0, 1060.0, 7.0, 0.0, INF, 1060.0),
        0,
        "not before the lease is over"
    );
    // Unknown states are refused.
    assert_eq!(queue_claim(4, 0.0, 0.0, 0.0, 7.0, 0.0, INF, 10.0), 0);
    // Option errors are codes; a rejected policy refuses every step.
    for (lease, max, err) in [
        (0.0, 5.0, Error::LeaseMs),
        (2_147_483_648.0, 5.0, Error::LeaseMs),
        (1000.0, 0.0, Error::MaxFailures),
        (1000.0, 1.5, Error::MaxFailures),
        (1000.0, -1.0, Error::MaxFailures),
    ] {
        set_record(rec(&[(Field::LeaseMs, lease), (Field::MaxFailures, max)]));
        assert_eq!(queue_check(INF), -(err.code() as f64), "{lease} {max}");
        assert_eq!(queue_claim(0, 0.0, 0.0, 0.0, 7.0, 0.0, INF, 10.0), 0);
    }
    set_record(rec(&[(Field::MaxFailures, 4_294_967_296.0)]));
    assert_eq!(queue_check(INF), 0.0, "any integer >= 1 (saturating)");
    set_record(rec(&[(Field::BaseMs, -1.0)]));
    assert_eq!(
        queue_check(INF),
        -(Error::BaseMs.code() as f64),
        "the schedule's own errors"
    );
    // maxRetentionMs crosses as an argument of every call.
    set_record(rec(&[(Field::BaseMs, 100.0), (Field::Jitter, 0.0)]));
    for bad in [0.0, -1.0, f64::NAN] {
        assert_eq!(queue_check(bad), -(Error::MaxRetentionMs.code() as f64));
        assert_eq!(queue_claim(0, 0.0, 0.0, 0.0, 7.0, 0.0, bad, 10.0), 0);
    }
    assert_eq!(queue_check(1000.0), 0.0);
    assert_eq!(queue_due(0, 0.0, 50.0, 0.0, 7.0, 0.0, R, 1000.0), 1);
    assert_eq!(queue_due(0, 0.0, 50.0, 0.0, 7.0, 0.0, R, 1001.0), 3);
    assert_eq!(queue_expire(0, 0.0, 50.0, 0.0, 7.0, 0.0, R, 1000.0), 0);
    assert_eq!(queue_expire(0, 2.0, 50.0, 0.0, 7.0, 0.0, R, 1001.0), 1);
    assert_eq!(answered()[..2], [3.0, 2.0]);
    // retry_now: a failed pending task due later becomes due now.
    assert_eq!(queue_retry_now(0, 1.0, 900.0, 0.0, 7.0, 0.0, INF, 100.0), 1);
    assert_eq!(answered()[..3], [0.0, 1.0, 100.0]);
    assert_eq!(queue_retry_now(0, 0.0, 900.0, 0.0, 7.0, 0.0, INF, 100.0), 0);
}

#[test]
fn a_healthy_gated_call_is_two_calls_and_the_status_says_everything() {
    use wasm_backoff::gate::*;
    use wasm_backoff::schema::{ENDED, FAILED, HELD, OWN_VETOED, REACHED};
    use wasm_backoff_core::policy::End;
    const INF: f64 = f64::INFINITY;
    let _t = turn();
    set_record(rec(&[
        (Field::BaseMs, 20.0),
        (Field::Jitter, 0.0),
        (Field::Consecutive, 1.0),
    ]));
    let h = gate_new(0.0) as usize;
    let tag = gate_admit(h, 0.0);
    assert!(tag >= 0.0);
    // status: phase, held, in flight, rounds, wake, probes, evictions,
    // timeouts, cause, until
    assert_eq!(
        answered()[..10],
        [0.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, -1.0]
    );
    // A success wants nothing more: nothing decided (NaN).
    assert!(gate_settle(h, tag as u32, REACHED, f64::NAN, f64::NAN, INF, 0.0).is_nan());
    assert_eq!(answered()[..5], [0.0, 0.0, 0.0, 0.0, -2.0], "idle");
    // A failure starts a round (backing off until 20 ms); the call is held
    // for it, and a new call is held too.
    let tag = gate_admit(h, 100.0);
    let own = 5.0; // its own next delay, unused: the circuit is open
    assert_eq!(
        gate_settle(h, tag as u32, FAILED, f64::NAN, own, INF, 100.0),
        HELD
    );
    assert_eq!(answered()[..5], [1.0, 1.0, 0.0, 1.0, 120.0]);
    assert_eq!(gate_admit(h, 101.0), HELD, "held");
    assert_eq!(
        answered()[..5],
        [1.0, 2.0, 0.0, 1.0, 120.0],
        "wake at the round's end"
    );
    // A held call whose deadline comes before the round's end leaves.
    let deadline = ENDED - End::Deadline as u8 as f64;
    assert_eq!(gate_keep(h, 0.0, 119.0), deadline);
    assert_eq!(
        gate_keep(h, OWN_VETOED, INF),
        ENDED - End::Exhausted as u8 as f64
    );
    assert_eq!(gate_keep(h, f64::NAN, 120.0), HELD);
    gate_left(h, true);
    assert_eq!(answered()[7], 1.0, "a timeout, counted by the core");
    gate_free(h);
    // Gate option errors.
    for (f, v, e) in [
        (Field::MaxQueued, -1.0, Error::MaxQueued),
        (Field::Concurrency, 0.0, Error::Concurrency),
        (Field::ProbeTimeoutMs, 0.0, Error::ProbeTimeoutMs),
        (Field::BaseMs, -1.0, Error::BaseMs),
        (Field::Consecutive, 0.5, Error::Consecutive),
        (Field::FailureRatio, 0.0, Error::FailureRatio),
        (Field::FailureRatio, 1.5, Error::FailureRatio),
    ] {
        set_record(rec(&[(f, v)]));
        assert_eq!(gate_new(0.0), -(e.code() as f64), "{f:?}");
    }
    for (extra, e) in [
        ((Field::Consecutive, 3.0), Error::Consecutive),
        ((Field::WindowMs, 0.0), Error::WindowMs),
        ((Field::MinCalls, 0.0), Error::MinCalls),
    ] {
        set_record(rec(&[(Field::FailureRatio, 0.5), extra]));
        assert_eq!(gate_new(0.0), -(e.code() as f64), "{extra:?}");
    }
}
