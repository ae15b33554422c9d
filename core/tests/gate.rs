//! The per-target gate's state machine, with a fake clock (time is passed in)
//! and a fixed schedule (no jitter: 100, 200, 400, 800 ms).

use wasm_backoff_core::gate::{
    Admit, Cause, Decision, Gate, Hold, Limits, Next, Outcome, Overflow, Phase,
};
use wasm_backoff_core::policy::End;
use wasm_backoff_core::{Backoff, Config, DefaultRng, Jitter, seeded_rng};

fn gate_with(max_queued: u32, overflow: Overflow, concurrency: u32) -> Gate<DefaultRng> {
    let cfg = Config::new()
        .base_ms(100.0)
        .max_delay_ms(800.0)
        .jitter(Jitter::None);
    let b = Backoff::new(cfg, seeded_rng(1)).unwrap();
    Gate::new(
        b,
        Limits {
            max_queued,
            overflow,
            concurrency,
            probe_timeout_ms: 1000.0,
        },
    )
}

fn gate() -> Gate<DefaultRng> {
    gate_with(1000, Overflow::EvictOldest, u32::MAX)
}

fn send(g: &mut Gate<DefaultRng>, now: f64) -> u32 {
    match g.admit(now) {
        Admit::Send(t) => t,
        other => panic!("expected a send, got {other:?}"),
    }
}

/// Everything `take` hands out at `now`.
fn drain(g: &mut Gate<DefaultRng>, now: f64) -> Vec<u32> {
    core::iter::from_fn(|| g.take(now)).collect()
}

#[test]
fn healthy_passes_straight_through() {
    let mut g = gate();
    for _ in 0..30 {
        send(&mut g, 0.0);
    }
    assert_eq!((g.phase(), g.in_flight(), g.held()), (Phase::Closed, 30, 0));
    assert_eq!(g.wake_at(), None);
}

#[test]
fn concurrent_failures_make_one_round_and_one_probe() {
    let mut g = gate();
    let tags: Vec<u32> = (0..30).map(|_| send(&mut g, 0.0)).collect();
    // The first failure starts the round; the 29 others are stale.
    assert!(g.failed(tags[0], -1.0, 10.0));
    assert_eq!(g.hold(), Hold::Held);
    for &t in &tags[1..] {
        assert!(
            !g.failed(t, -1.0, 11.0),
            "a stale failure must not lengthen"
        );
        assert_eq!(g.hold(), Hold::Held);
    }
    assert_eq!(
        (g.phase(), g.held(), g.in_flight(), g.rounds()),
        (Phase::Open, 30, 0, 1)
    );
    assert_eq!(g.wake_at(), Some(110.0));
    // New requests are held while waiting.
    assert_eq!(g.admit(50.0), Admit::Hold(Hold::Held));
    // Not before the wake time; then exactly one probe.
    assert_eq!(drain(&mut g, 109.0), Vec::<u32>::new());
    let probe = drain(&mut g, 110.0);
    assert_eq!(probe.len(), 1);
    assert_eq!((g.phase(), g.held(), g.probes()), (Phase::Probing, 30, 1));
    assert_eq!(g.admit(111.0), Admit::Hold(Hold::Held));
    assert_eq!(
        drain(&mut g, 500.0),
        Vec::<u32>::new(),
        "one probe per round"
    );
    // The probe fails: the next, longer round (200 ms), one probe again.
    assert!(g.failed(probe[0], -1.0, 120.0));
    assert_eq!(g.hold(), Hold::Held);
    assert_eq!(g.wake_at(), Some(320.0));
    assert_eq!(drain(&mut g, 319.0).len(), 0);
    let probe2 = drain(&mut g, 320.0);
    assert_eq!(probe2.len(), 1);
    assert_ne!(probe2[0], probe[0], "each round's probe has its own tag");
    // A late failure of the old probe's round is stale.
    assert!(!g.failed(probe[0], -1.0, 321.0));
    assert_eq!(g.hold(), Hold::Held);
    // Success: healthy, the schedule resets, every held request is released.
    g.succeeded(probe2[0], 0.0);
    assert_eq!(g.phase(), Phase::Closed);
    let released = drain(&mut g, 330.0);
    assert_eq!(released.len(), 32);
    assert_eq!(
        (g.held(), g.in_flight(), g.probes(), g.rounds()),
        (0, 32, 2, 2)
    );
    // The schedule restarted: a new failure of a released request waits 100 ms.
    assert!(g.failed(released[0], -1.0, 400.0));
    assert_eq!(g.hold(), Hold::Held);
    assert_eq!(g.wake_at(), Some(500.0));
}

#[test]
fn rounds_grow_to_the_cap_and_retry_after_lengthens_one() {
    let mut g = gate();
    let t = send(&mut g, 0.0);
    let mut now = 0.0;
    let mut probe = t;
    let mut waits = vec![];
    for _ in 0..6 {
        assert!(g.failed(probe, -1.0, now));
        g.hold();
        let wake = g.wake_at().unwrap();
        waits.push(wake - now);
        now = wake;
        probe = g.take(now).unwrap();
    }
    assert_eq!(waits, [100.0, 200.0, 400.0, 800.0, 800.0, 800.0]);
    // A Retry-After longer than the schedule's wait wins (plus <= 10 % jitter).
    assert!(g.failed(probe, 5000.0, now));
    g.hold();
    let w = g.wake_at().unwrap() - now;
    assert!((5000.0..=5500.0).contains(&w), "{w}");
}

#[test]
fn an_open_gate_probes_with_the_next_arrival() {
    let mut g = gate();
    let t = send(&mut g, 0.0);
    assert!(g.failed(t, -1.0, 0.0));
    // The failed request gave up instead of waiting: nothing held, no timer.
    assert_eq!(g.wake_at(), None);
    assert_eq!(g.admit(50.0), Admit::Hold(Hold::Held));
    assert_eq!(g.wake_at(), Some(100.0));
    g.left(false); // that one was aborted
    assert_eq!(g.wake_at(), None);
    // After the wake time, the first arrival is the probe and the next are held.
    let probe = send(&mut g, 150.0);
    assert_eq!(g.phase(), Phase::Probing);
    assert_eq!(g.admit(151.0), Admit::Hold(Hold::Held));
    g.succeeded(probe, 0.0);
    assert_eq!(drain(&mut g, 160.0).len(), 1);
    assert_eq!(g.phase(), Phase::Closed);
}

#[test]
fn a_cancelled_probe_hands_over_to_the_next_in_line() {
    let mut g = gate();
    let t = send(&mut g, 0.0);
    g.failed(t, -1.0, 0.0);
    g.hold();
    g.admit(1.0);
    let probe = g.take(100.0).unwrap();
    assert_eq!(g.held(), 1);
    g.cancelled(probe);
    assert_eq!(g.phase(), Phase::HalfOpen);
    let next = g.take(100.0).unwrap();
    assert_eq!(
        next & 1,
        1,
        "the next one probes at once, in the same round"
    );
    assert_eq!((g.held(), g.phase()), (0, Phase::Probing));
}

#[test]
fn a_success_sent_before_the_outage_does_not_end_it() {
    let mut g = gate();
    let a = send(&mut g, 0.0);
    let b = send(&mut g, 0.0);
    g.failed(a, -1.0, 1.0);
    g.hold();
    g.succeeded(b, 0.0);
    assert_eq!(g.phase(), Phase::Open);
}

#[test]
fn the_queue_is_bounded_evict_oldest() {
    let mut g = gate_with(3, Overflow::EvictOldest, u32::MAX);
    let t = send(&mut g, 0.0);
    g.failed(t, -1.0, 0.0);
    assert_eq!(g.hold(), Hold::Held);
    let answers: Vec<Admit> = (0..4).map(|i| g.admit(i as f64)).collect();
    assert_eq!(
        answers,
        [
            Admit::Hold(Hold::Held),
            Admit::Hold(Hold::Held),
            Admit::Hold(Hold::EvictHead),
            Admit::Hold(Hold::EvictHead),
        ]
    );
    assert_eq!((g.held(), g.evictions()), (3, 2));
}

#[test]
fn the_queue_is_bounded_reject_newest() {
    let mut g = gate_with(2, Overflow::RejectNewest, u32::MAX);
    let t = send(&mut g, 0.0);
    g.failed(t, -1.0, 0.0);
    g.hold();
    assert_eq!(g.admit(1.0), Admit::Hold(Hold::Held));
    assert_eq!(g.admit(2.0), Admit::Hold(Hold::EvictTail));
    assert_eq!((g.held(), g.evictions()), (2, 1));
    // No room at all: every hold is refused.
    let mut z = gate_with(0, Overflow::RejectNewest, u32::MAX);
    let t = send(&mut z, 0.0);
    z.failed(t, -1.0, 0.0);
    assert_eq!(z.hold(), Hold::EvictTail);
    assert_eq!(z.held(), 0);
}

#[test]
fn release_respects_the_concurrency_limit_and_order() {
    let mut g = gate_with(100, Overflow::EvictOldest, 2);
    let a = send(&mut g, 0.0);
    let _b = send(&mut g, 0.0);
    // At the limit, newcomers queue even while healthy.
    assert_eq!(g.admit(0.0), Admit::Hold(Hold::Held));
    g.succeeded(a, 0.0);
    // While anything is held, a newcomer queues behind it.
    assert_eq!(g.admit(1.0), Admit::Hold(Hold::Held));
    assert_eq!(drain(&mut g, 1.0).len(), 1);
    assert_eq!((g.held(), g.in_flight()), (1, 2));
    assert_eq!(drain(&mut g, 1.0).len(), 0);
}

#[test]
fn waiting_requests_know_whether_the_gate_wakes_before_their_deadline() {
    let mut g = gate();
    let t = send(&mut g, 0.0);
    g.failed(t, -1.0, 0.0);
    g.hold();
    assert!(g.can_wait(100.0));
    assert!(!g.can_wait(99.0));
    assert!(gate().can_wait(0.0));
}

#[test]
fn a_failure_after_recovery_starts_a_new_round_once() {
    let mut g = gate();
    let t = send(&mut g, 0.0);
    g.failed(t, -1.0, 0.0);
    g.hold();
    let p = g.take(100.0).unwrap();
    g.succeeded(p, 0.0);
    assert!(g.idle());
    let xs: Vec<u32> = (0..5).map(|_| send(&mut g, 200.0)).collect();
    let started: Vec<bool> = xs.iter().map(|&x| g.failed(x, -1.0, 201.0)).collect();
    assert_eq!(started, [true, false, false, false, false]);
    assert_eq!(g.rounds(), 2);
}

#[test]
fn a_hung_probe_times_out_into_the_next_round() {
    let mut g = gate();
    let t = send(&mut g, 0.0);
    g.failed(t, -1.0, 0.0);
    g.hold();
    g.admit(1.0);
    let hung = g.take(100.0).unwrap();
    // While the probe is out, the timer is its timeout.
    assert_eq!(g.wake_at(), Some(1100.0));
    assert_eq!(g.take(1099.0), None);
    // Timed out: the next round (200 ms), and the hung probe is stale now.
    assert_eq!(g.take(1100.0), None);
    assert_eq!((g.phase(), g.rounds()), (Phase::Open, 2));
    assert_eq!(g.wake_at(), Some(1300.0));
    let next = g.take(1300.0).unwrap();
    g.succeeded(hung, 0.0);
    assert_eq!(g.phase(), Phase::Probing, "a stale success proves nothing");
    g.succeeded(next, 0.0);
    assert_eq!(g.phase(), Phase::Closed);
    assert_eq!(g.in_flight(), 0);
}

#[test]
fn hung_requests_stop_occupying_their_slots_after_the_probe_timeout() {
    let mut g = gate_with(100, Overflow::EvictOldest, 1);
    let hung = send(&mut g, 0.0);
    // Held behind the hung request, with a timer for its stall.
    assert_eq!(g.admit(10.0), Admit::Hold(Hold::Held));
    assert_eq!(g.wake_at(), Some(1000.0));
    assert_eq!(drain(&mut g, 999.0).len(), 0);
    let b = drain(&mut g, 1000.0);
    assert_eq!((b.len(), g.in_flight(), g.rounds()), (1, 2, 0));
    // The limit still holds for the requests sent since: C waits for B...
    assert_eq!(g.admit(1001.0), Admit::Hold(Hold::Held));
    assert_eq!(g.wake_at(), Some(2000.0));
    g.succeeded(b[0], 0.0);
    let c = drain(&mut g, 1002.0);
    assert_eq!(c.len(), 1);
    // ...and when the hung one settles at last, it frees no slot twice: D waits for C.
    g.succeeded(hung, 0.0);
    assert_eq!(g.admit(1003.0), Admit::Hold(Hold::Held));
    assert_eq!(drain(&mut g, 1003.0).len(), 0);
    g.succeeded(c[0], 0.0);
    assert_eq!(drain(&mut g, 1004.0).len(), 1);
    // Without anything held, no stall timer.
    let mut g = gate_with(100, Overflow::EvictOldest, 1);
    send(&mut g, 0.0);
    assert_eq!(g.wake_at(), None);
    // With an infinite timeout, no stall either (but the rounds still end).
    let cfg = Config::new().base_ms(100.0).jitter(Jitter::None);
    let mut g = Gate::new(
        Backoff::new(cfg, seeded_rng(1)).unwrap(),
        Limits {
            max_queued: 100,
            overflow: Overflow::EvictOldest,
            concurrency: 1,
            probe_timeout_ms: f64::INFINITY,
        },
    );
    let a = send(&mut g, 0.0);
    assert_eq!(g.admit(0.0), Admit::Hold(Hold::Held));
    assert_eq!((g.wake_at(), drain(&mut g, 1e12).len()), (None, 0));
    g.failed(a, -1.0, 0.0);
    assert_eq!(g.wake_at(), Some(100.0));
}

/// What a call that wants another attempt can afford: its own next delay, a deadline.
fn next(own: Result<f64, End>, deadline_ms: f64) -> Option<Next> {
    Some(Next { own, deadline_ms })
}

#[test]
fn settle_decides_each_call_retry_hold_or_end() {
    use wasm_backoff_core::breaker::Trip;
    let failed = Outcome::Failed(f64::NAN);
    let mut g = gate().with_trip(Trip::Consecutive(2));
    // Below the threshold: the call's own backoff, within its deadline.
    let t = send(&mut g, 0.0);
    assert_eq!(
        g.settle(t, failed, next(Ok(30.0), 1e9), 0.0),
        Some(Decision::Retry(30.0))
    );
    // Its own limits come first, whatever the target does.
    let t = send(&mut g, 30.0);
    assert_eq!(
        g.settle(t, failed, next(Err(End::Vetoed), 1e9), 30.0),
        Some(Decision::End(End::Vetoed))
    );
    assert_eq!(
        (g.phase(), g.until()),
        (Phase::Open, Some(130.0)),
        "the second failure in a row tripped"
    );
    let probe = send(&mut g, 130.0);
    assert_eq!(
        g.settle(probe, failed, next(Err(End::Exhausted), 1e9), 130.0),
        Some(Decision::End(End::Exhausted))
    );
    // Open (until 330): held for the round, unless it ends past the call's deadline.
    let probe = send(&mut g, 330.0);
    assert_eq!(
        g.settle(probe, failed, next(Ok(0.0), 730.0), 330.0),
        Some(Decision::Hold(Hold::Held))
    );
    let probe = g.take(730.0).unwrap();
    assert_eq!(
        g.settle(probe, failed, next(Ok(0.0), 1529.0), 730.0),
        Some(Decision::End(End::Deadline))
    );
    // A success wants nothing: recorded, nothing decided.
    let probe = send(&mut g, 1530.0);
    assert_eq!(g.settle(probe, Outcome::Reached, None, 1530.0), None);
    assert_eq!(g.phase(), Phase::Closed);
    // Fail-fast: the call ends, the circuit open.
    let mut g = gate().fail_fast(true);
    let t = send(&mut g, 0.0);
    assert_eq!(
        g.settle(t, failed, next(Ok(5.0), 1e9), 0.0),
        Some(Decision::End(End::CircuitOpen))
    );
}

#[test]
fn a_probe_cut_by_its_deadline_starts_the_next_round_another_cut_call_says_nothing() {
    let mut g = gate();
    let a = send(&mut g, 0.0);
    let b = send(&mut g, 0.0);
    assert!(g.failed(a, -1.0, 0.0)); // a 100 ms round
    let probe = send(&mut g, 100.0);
    assert_eq!(g.phase(), Phase::Probing);
    // A call sent before the round, cut by its deadline: nothing changes.
    g.settle(b, Outcome::TimedOut, None, 150.0);
    assert_eq!((g.phase(), g.in_flight()), (Phase::Probing, 1));
    // The probe, cut: no answer in the time it had. The next round (200 ms) starts now.
    g.settle(probe, Outcome::TimedOut, None, 250.0);
    assert_eq!(
        (g.phase(), g.cause(), g.until(), g.rounds()),
        (Phase::Open, Cause::ProbeTimeout, Some(450.0), 2)
    );
    // Cancelled (aborted by its caller), a probe says nothing: the next request probes.
    let probe = send(&mut g, 450.0);
    g.settle(probe, Outcome::Cancelled, None, 460.0);
    assert_eq!((g.phase(), g.rounds()), (Phase::HalfOpen, 2));
}

#[test]
fn only_news_counts_and_the_core_says_which_outcome_is_news() {
    let mut g = gate();
    let a = send(&mut g, 0.0);
    let b = send(&mut g, 0.0);
    assert!(g.news(a) && g.news(b));
    assert!(g.failed(a, -1.0, 0.0));
    assert!(!g.news(b), "sent before the round");
    let probe = send(&mut g, 100.0);
    assert!(g.news(probe));
    g.succeeded(probe, 110.0);
    assert_eq!(g.phase(), Phase::Closed);
    // b fails after the probe closed the circuit: stale, no second round.
    assert!(!g.news(b));
    assert!(!g.failed(b, -1.0, 300.0));
    assert_eq!((g.phase(), g.rounds()), (Phase::Closed, 1));
    let c = send(&mut g, 300.0);
    assert!(g.news(c), "sent after: news");
}

#[test]
fn keep_says_whether_a_held_call_stays_for_the_round() {
    let mut g = gate();
    let t = send(&mut g, 0.0);
    assert!(g.failed(t, -1.0, 0.0)); // until 100
    assert_eq!(g.keep(Ok(10.0), 100.0), None);
    assert_eq!(g.keep(Ok(10.0), 99.0), Some(End::Deadline));
    assert_eq!(g.keep(Err(End::Exhausted), 1e9), Some(End::Exhausted));
    assert_eq!(
        g.keep(Err(End::Vetoed), 1e9),
        Some(End::Exhausted),
        "a held call has no answer of its own"
    );
}
