//! The gate as a circuit breaker, with a fake clock: thresholds, the ratio
//! window, half-open, fail-fast, isolation, and a state carried to another
//! gate (another isolate).

use wasm_backoff_core::breaker::Trip;
use wasm_backoff_core::gate::*;
use wasm_backoff_core::{Backoff, Config, DefaultRng, Jitter, seeded_rng};

/// Rounds of 100, 200, 400, 800 ms; probe timeout 1 s.
fn gate(trip: Trip, fail_fast: bool) -> Gate<DefaultRng> {
    let cfg = Config::new()
        .base_ms(100.0)
        .max_delay_ms(800.0)
        .jitter(Jitter::None);
    let limits = Limits {
        max_queued: 1000,
        overflow: Overflow::EvictOldest,
        concurrency: u32::MAX,
        probe_timeout_ms: 1000.0,
    };
    Gate::new(Backoff::new(cfg, seeded_rng(1)).unwrap(), limits)
        .with_trip(trip)
        .fail_fast(fail_fast)
}

fn send(g: &mut Gate<DefaultRng>, now: f64) -> u32 {
    match g.admit(now) {
        Admit::Send(t) => t,
        other => panic!("expected a send at {now}, got {other:?}"),
    }
}

#[test]
fn consecutive_threshold_trips_on_the_nth_failure_in_a_row() {
    let mut g = gate(Trip::Consecutive(3), false);
    for i in 0..2 {
        let t = send(&mut g, i as f64);
        assert!(!g.failed(t, -1.0, i as f64), "below the threshold");
        assert_eq!(g.phase(), Phase::Closed);
    }
    let ok = send(&mut g, 2.0);
    g.succeeded(ok, 2.0); // breaks the run
    assert_eq!(g.failures(), 0);
    for i in 3..5 {
        let t = send(&mut g, i as f64);
        g.failed(t, -1.0, i as f64);
    }
    let t = send(&mut g, 5.0);
    assert!(g.failed(t, -1.0, 5.0), "third in a row");
    assert_eq!((g.phase(), g.cause()), (Phase::Open, Cause::Tripped));
}

#[test]
fn a_single_failure_among_successes_does_not_trip_the_ratio() {
    let trip = Trip::Ratio {
        ratio: 0.5,
        window_ms: 10_000.0,
        min_calls: 10,
    };
    let mut g = gate(trip, false);
    for i in 0..20 {
        let t = send(&mut g, i as f64);
        if i == 7 {
            assert!(!g.failed(t, -1.0, i as f64));
        } else {
            g.succeeded(t, i as f64);
        }
    }
    assert_eq!(g.phase(), Phase::Closed);
    // Then 20 failures: past half of 40 calls in the window.
    let mut tripped_at = None;
    for i in 20..40 {
        let t = send(&mut g, i as f64);
        if g.failed(t, -1.0, i as f64) {
            tripped_at = Some(i);
            break;
        }
    }
    assert_eq!(
        tripped_at,
        Some(37),
        "18 + 1 failures of 37 calls: not yet; 19 of 38 trips"
    );
}

#[test]
fn half_open_probe_closes_or_reopens_with_a_longer_round() {
    let mut g = gate(Trip::Consecutive(1), false);
    let t = send(&mut g, 0.0);
    g.failed(t, -1.0, 0.0);
    assert_eq!(g.admit(50.0), Admit::Hold(Hold::Held));
    let p = g.take(100.0).expect("the probe at 100");
    assert_eq!((g.phase(), g.cause()), (Phase::Probing, Cause::RoundOver));
    g.failed(p, -1.0, 110.0);
    assert_eq!((g.phase(), g.cause()), (Phase::Open, Cause::ProbeFailed));
    assert_eq!(g.admit(200.0), Admit::Hold(Hold::Held));
    assert_eq!(g.take(309.0), None, "the second round is 200 ms");
    let p = g.take(310.0).unwrap();
    g.succeeded(p, 320.0);
    assert_eq!(
        (g.phase(), g.cause()),
        (Phase::Closed, Cause::ProbeSucceeded)
    );
}

#[test]
fn fail_fast_rejects_while_open_and_lets_one_probe_through() {
    let mut g = gate(Trip::Consecutive(2), true);
    for i in 0..2 {
        let t = send(&mut g, i as f64);
        g.failed(t, -1.0, i as f64);
    }
    assert_eq!(g.admit(50.0), Admit::Reject);
    assert_eq!(g.held(), 0, "nothing held when failing fast");
    let probe = send(&mut g, 101.0);
    assert_eq!(g.admit(102.0), Admit::Reject, "one probe at a time");
    g.succeeded(probe, 103.0);
    send(&mut g, 104.0);
}

#[test]
fn isolation_holds_everything_until_released() {
    let mut g = gate(Trip::Consecutive(1), false);
    let inflight = send(&mut g, 0.0);
    g.isolate();
    assert_eq!(g.admit(1.0), Admit::Hold(Hold::Held));
    g.failed(inflight, -1.0, 2.0); // stale: changes nothing
    assert_eq!(g.phase(), Phase::Isolated);
    assert_eq!((g.take(1e9), g.wake_at()), (None, None));
    g.release();
    assert!(g.take(3.0).is_some());
    assert_eq!((g.phase(), g.cause()), (Phase::Closed, Cause::Released));
    let mut f = gate(Trip::Consecutive(1), true);
    f.isolate();
    assert_eq!(f.admit(0.0), Admit::Reject);
}

#[test]
fn a_saved_state_resumes_in_another_gate() {
    let trip = Trip::Consecutive(3);
    let mut a = gate(trip, false);
    // Two failed rounds: open until 0 + 100 … then 200 ms from 150.
    for i in 0..3 {
        let t = send(&mut a, i as f64);
        a.failed(t, -1.0, i as f64);
    }
    a.admit(3.0);
    let p = a.take(102.0).unwrap();
    a.failed(p, -1.0, 150.0); // second round: until 350
    let saved = a.save(160.0);
    assert_eq!(saved[SAVED_PHASE], 1.0);
    assert_eq!(saved[SAVED_UNTIL], 350.0);
    assert_eq!(saved[SAVED_ROUND], 2.0);

    let mut b = gate(trip, false);
    b.restore(&saved, 200.0).unwrap();
    assert_eq!(b.cause(), Cause::Restored);
    assert_eq!(b.admit(200.0), Admit::Hold(Hold::Held), "still open");
    assert_eq!(b.take(349.0), None);
    let p = b.take(350.0).expect("the probe when the round ends");
    b.failed(p, -1.0, 360.0);
    b.admit(361.0);
    assert_eq!(
        b.wake_at(),
        Some(760.0),
        "the third round, 400 ms: the schedule went on"
    );

    // A closed target's count comes along too.
    let mut c = gate(trip, false);
    for i in 0..2 {
        let t = send(&mut c, i as f64);
        c.failed(t, -1.0, i as f64);
    }
    let mut d = gate(trip, false);
    d.restore(&c.save(5.0), 6.0).unwrap();
    let t = send(&mut d, 7.0);
    assert!(
        d.failed(t, -1.0, 7.0),
        "the third failure in a row, counted across gates"
    );
}

#[test]
fn a_malformed_or_future_state_is_refused_and_the_gate_starts_closed() {
    let mut a = gate(Trip::Consecutive(1), false);
    let t = send(&mut a, 0.0);
    a.failed(t, -1.0, 0.0);
    let good = a.save(10.0);
    let bad: Vec<(usize, f64)> = vec![
        (SAVED_PHASE, 3.0),
        (SAVED_PHASE, f64::NAN),
        (SAVED_UNTIL, f64::INFINITY),
        (SAVED_UNTIL, 1e13),
        (SAVED_ROUND, -1.0),
        (SAVED_ROUND, 1.5),
        (SAVED_PREV, -5.0),
        (SAVED_FAILURES, f64::NAN),
        (SAVED_WINDOW, 1.0), // calls 1 …
        (SAVED_AT, f64::NAN),
    ];
    for (i, v) in bad {
        let mut s = good;
        s[i] = v;
        if i == SAVED_WINDOW {
            s[SAVED_WINDOW + BUCKETS_OF_FAILS] = 2.0; // … failures 2
        }
        let mut b = gate(Trip::Consecutive(1), false);
        assert_eq!(
            b.restore(&s, 20.0),
            Err(RestoreError::Malformed),
            "field {i} = {v}"
        );
        assert_eq!(b.phase(), Phase::Closed);
        send(&mut b, 21.0);
    }
    let mut b = gate(Trip::Consecutive(1), false);
    assert_eq!(
        b.restore(&good, 10.0 - CLOCK_SKEW_MS - 1.0),
        Err(RestoreError::Future)
    );
    assert_eq!(
        b.restore(&good, 10.0 - CLOCK_SKEW_MS),
        Ok(()),
        "within the clock skew"
    );
}

const BUCKETS_OF_FAILS: usize = wasm_backoff_core::breaker::BUCKETS;

/// The adaptive limiter alone against a server of fixed capacity (a token
/// bucket of 50 req/s answering "throttled" beyond it), one client that
/// wants more, in virtual time: its rate settles near the capacity.
#[test]
fn the_limiter_converges_to_the_servers_capacity() {
    use wasm_backoff_core::limiter::Limiter;
    let (capacity, burst) = (50.0, 5.0);
    let mut l = Limiter::new(0.0);
    let (mut tokens, mut served_at) = (burst, 0.0);
    let mut now = 0.0;
    let mut sent = Vec::new();
    while now < 120_000.0 {
        now += l.acquire(now).max(2.0); // the client wants 500 req/s
        let t = tokens + (now - served_at) / 1000.0 * capacity;
        tokens = if t < burst { t } else { burst };
        served_at = now;
        let throttled = tokens < 1.0;
        if !throttled {
            tokens -= 1.0;
            sent.push(now);
        }
        l.record(throttled, f64::NAN, f64::NAN, now);
    }
    // The served rate over the last minute.
    let last = sent.iter().filter(|t| **t >= 60_000.0).count() as f64 / 60.0;
    assert!(
        (last - capacity).abs() <= 0.2 * capacity,
        "served {last:.1} req/s of {capacity}"
    );
    assert!(
        (l.rate() - capacity).abs() <= 0.2 * capacity,
        "limiter rate {:.1}",
        l.rate()
    );
}
