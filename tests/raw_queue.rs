#![cfg(all(not(target_arch = "wasm32"), feature = "queue"))]
//! `RawQueue`, the queue's plain-number boundary, natively: option errors
//! come back as codes (never a panic), and `step` applies the core's
//! transitions to records given as numbers, refusing anything else.

use proptest::prelude::*;
use wasm_backoff::{queue_out, RawBackoff, RawQueue};

const NAN: f64 = f64::NAN;

/// A RawBackoff with base 100 ms, no jitter (index 0), options otherwise unset.
fn backoff(base_ms: f64) -> RawBackoff {
    RawBackoff::new(
        NAN, NAN, base_ms, NAN, NAN, 0.0, NAN, NAN, NAN, NAN, NAN, NAN, 1.0, NAN,
    )
}

fn out() -> [f64; 4] {
    // SAFETY: natively the static lives in this process; read right after `step`.
    unsafe { *(queue_out() as *const [f64; 4]) }
}

#[test]
fn option_errors_are_codes() {
    let ok = backoff(100.0);
    for (lease, max, code) in [
        (0.0, 5.0, 40),
        (NAN, 5.0, 40),
        (2_147_483_648.0, 5.0, 40),
        (1000.0, 0.0, 41),
        (1000.0, 1.5, 41),
        (1000.0, NAN, 41),
        (1000.0, -1.0, 41),
        (1000.0, 4_294_967_296.0, 41),
    ] {
        assert_eq!(
            RawQueue::new(&ok, lease, max).error(),
            code,
            "{lease} {max}"
        );
    }
    assert_eq!(RawQueue::new(&ok, 1000.0, f64::INFINITY).error(), 0);
    // A rejected backoff reports its own code.
    let bad = backoff(-1.0);
    assert_ne!(bad.error(), 0);
    assert_eq!(RawQueue::new(&bad, 1000.0, 5.0).error(), bad.error());
    // A rejected queue refuses every step.
    assert_eq!(
        RawQueue::new(&ok, 0.0, 5.0).step(1, 0, 0.0, 0.0, 0.0, 1.0, 10.0),
        0
    );
}

#[test]
fn step_applies_the_transitions() {
    let q = RawQueue::new(&backoff(100.0), 1000.0, 2.0);
    // due: pending and due → claim (1); before next_attempt_at → wait (0).
    assert_eq!(q.step(0, 0, 0.0, 50.0, 0.0, 7.0, 50.0), 1);
    assert_eq!(q.step(0, 0, 0.0, 50.0, 0.0, 7.0, 49.0), 0);
    // claim → processing, complete_by = now + lease.
    assert_eq!(q.step(1, 0, 0.0, 50.0, 0.0, 7.0, 60.0), 1);
    assert_eq!(out(), [1.0, 0.0, 50.0, 1060.0]);
    // complete within the lease → processed; after it, refused.
    assert_eq!(q.step(2, 1, 0.0, 50.0, 1060.0, 7.0, 1060.0), 1);
    assert_eq!(out()[0], 2.0);
    assert_eq!(q.step(2, 1, 0.0, 50.0, 1060.0, 7.0, 1061.0), 0);
    // fail → pending after 100 ms (base, no jitter).
    assert_eq!(q.step(3, 1, 0.0, 50.0, 1060.0, 7.0, 500.0), 1);
    assert_eq!(out(), [0.0, 1.0, 600.0, 1060.0]);
    // the second failure of 2 → error; permanent failure → error at once.
    assert_eq!(q.step(3, 1, 1.0, 50.0, 1060.0, 7.0, 500.0), 1);
    assert_eq!(out()[..2], [3.0, 2.0]);
    assert_eq!(q.step(4, 1, 0.0, 50.0, 1060.0, 7.0, 500.0), 1);
    assert_eq!(out()[..2], [3.0, 1.0]);
    // sweep: due code 2 past complete_by, then back to pending.
    assert_eq!(q.step(0, 1, 0.0, 50.0, 1060.0, 7.0, 1061.0), 2);
    assert_eq!(q.step(5, 1, 0.0, 50.0, 1060.0, 7.0, 1061.0), 1);
    assert_eq!(out(), [0.0, 1.0, 1161.0, 1060.0]);
    assert_eq!(
        q.step(5, 1, 0.0, 50.0, 1060.0, 7.0, 1060.0),
        0,
        "not before the lease is over"
    );
    // Unknown ops and states are refused.
    assert_eq!(q.step(9, 0, 0.0, 0.0, 0.0, 7.0, 10.0), 0);
    assert_eq!(q.step(1, 4, 0.0, 0.0, 0.0, 7.0, 10.0), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// No input reaches a panic, and an applied transition writes a valid state.
    #[test]
    fn step_never_panics(op in 0u8..8, state in 0u8..6, fields in proptest::collection::vec(any::<f64>(), 5), lease in any::<f64>(), max in any::<f64>()) {
        let q = RawQueue::new(&backoff(100.0), lease, max);
        let r = q.step(op, state, fields[0], fields[1], fields[2], fields[3], fields[4]);
        if op > 0 && r == 1 {
            prop_assert!(out()[0] <= 3.0);
        }
    }
}
