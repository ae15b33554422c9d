//! The task queue's state machine with a fake clock: transitions, the
//! supervisor sweep, the failure threshold, the retry delays, validation.
#![cfg(feature = "queue")]

use wasm_backoff_core::queue::{Due, Queue, QueueConfig, QueueError, Task, TaskState};
use wasm_backoff_core::{Backoff, Config, ConfigError, Jitter, seeded_rng};

/// A fake clock: the tests move it by hand.
struct Clock(f64);
impl Clock {
    fn now(&self) -> f64 {
        self.0
    }
    fn advance(&mut self, ms: f64) -> f64 {
        self.0 += ms;
        self.0
    }
}

fn queue(lease_ms: f64, max_failures: u32) -> Queue {
    let backoff = Config::new().base_ms(100.0).jitter(Jitter::None);
    Queue::new(
        QueueConfig::new()
            .lease_ms(lease_ms)
            .max_failures(max_failures)
            .backoff(backoff),
    )
    .unwrap()
}

#[test]
fn a_new_task_is_due_at_once_and_claim_takes_a_lease() {
    let q = queue(1000.0, 3);
    let clock = Clock(5000.0);
    let t = Task::new(clock.now(), 7);
    assert_eq!(t.state, TaskState::Pending);
    assert_eq!(q.due(&t, clock.now()), Due::Claim);
    let c = q.claim(&t, clock.now()).unwrap();
    assert_eq!(c.state, TaskState::Processing);
    assert_eq!(c.complete_by, 6000.0);
    assert_eq!(c.failure_count, 0);
    assert_eq!(c.seed, 7);
    // A processing task cannot be claimed again while the lease holds.
    assert_eq!(q.due(&c, 6000.0), Due::Wait);
    assert_eq!(q.claim(&c, 5500.0), None);
}

#[test]
fn completion_counts_only_within_the_lease() {
    let q = queue(1000.0, 3);
    let mut clock = Clock(0.0);
    let c = q.claim(&Task::new(0.0, 1), clock.now()).unwrap();
    clock.advance(1000.0); // exactly complete_by: still ours
    let done = q.complete(&c, clock.now()).unwrap();
    assert_eq!(done.state, TaskState::Processed);
    assert!(done.state.is_final());
    assert_eq!(
        q.complete(&c, 1000.5),
        None,
        "after complete_by the agent has given up"
    );
    assert_eq!(
        q.complete(&Task::new(0.0, 1), 0.0),
        None,
        "a pending task cannot complete"
    );
    assert_eq!(q.complete(&done, 0.0), None, "nor a processed one");
    // Final states are left alone by everything.
    for now in [0.0, 1e9] {
        assert_eq!(q.due(&done, now), Due::Wait);
        assert_eq!(q.claim(&done, now), None);
        assert_eq!(q.fail(&done, now), None);
        assert_eq!(q.sweep(&done, now), None);
        assert_eq!(q.fail_permanently(&done), None);
    }
}

#[test]
fn a_retryable_failure_returns_the_task_to_pending_after_the_backoff() {
    let q = queue(1000.0, 3);
    let mut clock = Clock(0.0);
    let c = q.claim(&Task::new(0.0, 1), clock.now()).unwrap();
    clock.advance(200.0);
    let p = q.fail(&c, clock.now()).unwrap();
    assert_eq!(p.state, TaskState::Pending);
    assert_eq!(p.failure_count, 1);
    // base 100, factor 2, no jitter: 100 ms after the first failure.
    assert_eq!(p.next_attempt_at, 300.0);
    assert_eq!(q.due(&p, 299.9), Due::Wait, "not before next_attempt_at");
    assert_eq!(q.claim(&p, 299.9), None);
    assert_eq!(q.due(&p, 300.0), Due::Claim);
    let c2 = q.claim(&p, 300.0).unwrap();
    let p2 = q.fail(&c2, 400.0).unwrap();
    assert_eq!(p2.failure_count, 2);
    assert_eq!(p2.next_attempt_at, 600.0, "200 ms after the second failure");
    // Only a processing task can fail.
    assert_eq!(q.fail(&p2, 1e6), None);
}

#[test]
fn the_failure_that_reaches_max_failures_is_an_error() {
    let q = queue(1000.0, 3);
    let mut t = Task::new(0.0, 9);
    for n in 1..=2 {
        let now = t.next_attempt_at;
        t = q.fail(&q.claim(&t, now).unwrap(), now).unwrap();
        assert_eq!((t.state, t.failure_count), (TaskState::Pending, n));
    }
    let now = t.next_attempt_at;
    t = q.fail(&q.claim(&t, now).unwrap(), now).unwrap();
    assert_eq!(
        (t.state, t.failure_count),
        (TaskState::Error, 3),
        "the 3rd failure of 3 allowed"
    );
    assert!(t.state.is_final());
    assert_eq!(q.claim(&t, 1e9), None);

    // max_failures 1: the first failure is final.
    let once = queue(1000.0, 1);
    let e = once
        .fail(&once.claim(&Task::new(0.0, 1), 0.0).unwrap(), 0.0)
        .unwrap();
    assert_eq!((e.state, e.failure_count), (TaskState::Error, 1));
}

#[test]
fn a_permanent_failure_is_an_error_at_once() {
    let q = queue(1000.0, 5);
    let c = q.claim(&Task::new(0.0, 1), 0.0).unwrap();
    let e = q.fail_permanently(&c).unwrap();
    assert_eq!((e.state, e.failure_count), (TaskState::Error, 1));
    assert_eq!(
        q.fail_permanently(&Task::new(0.0, 1)),
        None,
        "only a processing task"
    );
}

#[test]
fn the_sweep_takes_back_expired_leases_only() {
    let q = queue(1000.0, 2);
    let mut clock = Clock(0.0);
    let c = q.claim(&Task::new(clock.now(), 3), clock.now()).unwrap();
    // Within the lease (complete_by included) the sweep leaves it alone.
    for at in [0.0, 500.0, 1000.0] {
        assert_eq!(q.due(&c, at), Due::Wait);
        assert_eq!(q.sweep(&c, at), None);
    }
    // The instance crashed: past complete_by the sweep counts a failure.
    clock.advance(1500.0);
    assert_eq!(q.due(&c, clock.now()), Due::Sweep);
    assert_eq!(
        q.claim(&c, clock.now()),
        None,
        "an expired lease is swept, not claimed"
    );
    let p = q.sweep(&c, clock.now()).unwrap();
    assert_eq!((p.state, p.failure_count), (TaskState::Pending, 1));
    assert_eq!(p.next_attempt_at, 1600.0);
    // A pending task is not the sweep's business.
    assert_eq!(q.sweep(&p, 1e9), None);
    // Claimed again and lost again: the second failure of 2 is an error.
    let c2 = q.claim(&p, 1600.0).unwrap();
    assert_eq!(c2.complete_by, 2600.0);
    let e = q.sweep(&c2, 2600.1).unwrap();
    assert_eq!((e.state, e.failure_count), (TaskState::Error, 2));
}

#[test]
fn retry_delays_come_from_the_calculator_and_are_reproducible() {
    let cfg = Config::new().base_ms(100.0).max_delay_ms(5000.0); // full jitter
    let q = Queue::new(QueueConfig::new().backoff(cfg)).unwrap();
    for n in 1..=10u32 {
        let d = q.retry_delay(42, n);
        assert_eq!(d, q.retry_delay(42, n), "same seed and failure: same delay");
        let cap = (100.0 * 2f64.powi(n as i32 - 1)).min(5000.0);
        assert!(
            (0.0..cap).contains(&d),
            "failure {n}: {d} within full jitter of {cap}"
        );
    }
    // Different tasks (seeds) and different failures draw differently.
    let a: Vec<f64> = (1..=8).map(|n| q.retry_delay(1, n)).collect();
    let b: Vec<f64> = (1..=8).map(|n| q.retry_delay(2, n)).collect();
    assert_ne!(a, b);
    // The draw is Backoff::sample_at's, with the seed mixed with the count.
    let mixed = 1u64 ^ 3u64.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let expect = Backoff::new(cfg, seeded_rng(mixed)).unwrap().sample_at(3);
    assert_eq!(q.retry_delay(1, 3), expect);
    // The backoff's own limits play no part: max_failures is the queue's.
    let limited = Queue::new(QueueConfig::new().backoff(cfg.max_attempts(Some(1)))).unwrap();
    assert_eq!(limited.retry_delay(1, 3), expect);
}

#[test]
fn config_is_validated_with_errors_naming_the_option() {
    let bad = [
        (QueueConfig::new().lease_ms(0.0), QueueError::LeaseMs),
        (QueueConfig::new().lease_ms(-1.0), QueueError::LeaseMs),
        (QueueConfig::new().lease_ms(f64::NAN), QueueError::LeaseMs),
        (
            QueueConfig::new().lease_ms(f64::INFINITY),
            QueueError::LeaseMs,
        ),
        (
            QueueConfig::new().lease_ms(2_147_483_648.0),
            QueueError::LeaseMs,
        ),
        (QueueConfig::new().max_failures(0), QueueError::MaxFailures),
        (
            QueueConfig::new().backoff(Config::new().base_ms(-1.0)),
            QueueError::Backoff(ConfigError::BaseMs),
        ),
    ];
    for (cfg, err) in bad {
        assert_eq!(Queue::new(cfg), Err(err), "{cfg:?}");
    }
    assert!(QueueError::LeaseMs.message().starts_with("leaseMs "));
    assert!(
        QueueError::MaxFailures
            .message()
            .starts_with("maxFailures ")
    );
    assert_eq!(
        QueueError::Backoff(ConfigError::Factor).message(),
        ConfigError::Factor.message()
    );
    assert!(Queue::new(QueueConfig::new().lease_ms(2_147_483_647.0).max_failures(1)).is_ok());
    assert_eq!(QueueConfig::default(), QueueConfig::new());
}

#[test]
fn states_round_trip_through_their_numbers() {
    for s in [
        TaskState::Pending,
        TaskState::Processing,
        TaskState::Processed,
        TaskState::Error,
    ] {
        assert_eq!(TaskState::from_u8(s as u8), Some(s));
    }
    assert_eq!(TaskState::from_u8(4), None);
}

/// Two instances decide from the same record at the same time: both may
/// compute a claim, and the store's compare-and-set lets one write it. Here
/// the decisions are checked to be identical, so whichever wins, the record
/// is the same (the instance id is the caller's part).
#[test]
fn decisions_are_pure_functions_of_record_and_time() {
    let q = queue(250.0, 4);
    let t = Task::new(10.0, 5);
    assert_eq!(q.claim(&t, 20.0), q.claim(&t, 20.0));
    let c = q.claim(&t, 20.0).unwrap();
    assert_eq!(q.sweep(&c, 1000.0), q.sweep(&c, 1000.0));
}

/// A simulation with a fake clock: three instances share a compare-and-set
/// store of 50 tasks; each step one instance claims a due task, finishes or
/// fails one of its own, crashes (abandoning its tasks), or sweeps. Whatever
/// the interleaving: a task is never held by two instances at once, an
/// instance's completion counts only within its lease, failure counts never
/// pass the threshold, and every task ends processed or error.
#[test]
fn simulated_instances_never_share_a_task_and_lose_nothing() {
    use wasm_backoff_core::Rng;
    #[derive(Clone, Copy)]
    struct Rec {
        task: Task,
        version: u64,
        owner: Option<usize>,
    }
    /// The store's only atomic operation.
    fn swap(store: &mut [Rec], i: usize, version: u64, task: Task, owner: Option<usize>) -> bool {
        if store[i].version != version {
            return false;
        }
        store[i] = Rec {
            task,
            version: version + 1,
            owner,
        };
        true
    }
    let (mut sweeps, mut lost_races, mut errors, mut expired) = (0, 0, 0, 0);
    for seed in 0..20u64 {
        // Half the runs with a retention that ends some tasks before their failures do.
        let retention = if seed % 2 == 0 { f64::INFINITY } else { 600.0 };
        let q = Queue::new(
            QueueConfig::new()
                .lease_ms(100.0)
                .max_failures(4)
                .max_retention_ms(retention)
                .backoff(Config::new().base_ms(10.0).max_delay_ms(200.0)),
        )
        .unwrap();
        let mut rng = seeded_rng(seed);
        let mut clock = Clock(0.0);
        let mut store: Vec<Rec> = (0..50)
            .map(|i| Rec {
                task: Task::new(0.0, i),
                version: 0,
                owner: None,
            })
            .collect();
        // What each instance believes it holds: (task index, version it wrote).
        let mut held: [Vec<(usize, u64)>; 3] = Default::default();
        let mut steps = 0;
        while store.iter().any(|r| !r.task.state.is_final()) {
            steps += 1;
            assert!(steps < 200_000, "seed {seed}: no progress");
            clock.advance((rng.next_u32() % 7) as f64);
            let now = clock.now();
            let me = (rng.next_u32() % 3) as usize;
            match rng.next_u32() % 10 {
                // Claim the first due task (a stale read: the instance may lose the swap).
                0..=3 => {
                    if let Some(i) =
                        (0..store.len()).find(|&i| q.due(&store[i].task, now) == Due::Claim)
                    {
                        let seen = store[i];
                        if rng.next_u32() % 4 == 0 {
                            // Another instance claims in between: the stale swap must fail.
                            let other = (me + 1) % 3;
                            let c = q.claim(&seen.task, now).unwrap();
                            assert!(swap(&mut store, i, seen.version, c, Some(other)));
                            held[other].push((i, seen.version + 1));
                            assert!(
                                !swap(&mut store, i, seen.version, c, Some(me)),
                                "two claims of one version"
                            );
                        } else {
                            let c = q.claim(&seen.task, now).unwrap();
                            assert!(swap(&mut store, i, seen.version, c, Some(me)));
                            held[me].push((i, seen.version + 1));
                        }
                    }
                }
                // Finish (or fail) one held task, if the lease still allows it.
                4..=6 => {
                    if let Some((i, v)) = held[me].pop() {
                        let mine = store[i];
                        let next = match rng.next_u32() % 3 {
                            0 => q.fail(&mine.task, now),
                            1 if rng.next_u32() % 8 == 0 => q.fail_permanently(&mine.task),
                            _ => q.complete(&mine.task, now),
                        };
                        if mine.version == v {
                            assert_eq!(mine.owner, Some(me));
                            if let Some(n) = next {
                                assert!(swap(&mut store, i, v, n, None));
                            }
                            // else: the lease is over; the sweep will take it back.
                        } else {
                            // Swept and maybe re-claimed meanwhile: the write must lose.
                            if let Some(n) = next {
                                assert!(!swap(&mut store, i, v, n, None));
                                lost_races += 1;
                            }
                        }
                    }
                }
                // Crash: everything held is abandoned.
                7 => held[me].clear(),
                // Sweep every expired lease; expire every task past its retention.
                _ => {
                    for i in 0..store.len() {
                        let seen = store[i];
                        if let Some(n) = q.sweep(&seen.task, now) {
                            assert!(now > seen.task.complete_by);
                            assert!(swap(&mut store, i, seen.version, n, None));
                            sweeps += 1;
                        } else if let Some(n) = q.expire(&seen.task, now) {
                            assert!(seen.task.state == TaskState::Pending && seen.owner.is_none());
                            assert!(swap(&mut store, i, seen.version, n, None));
                            expired += 1;
                        }
                    }
                }
            }
            for r in &store {
                assert!(r.task.failure_count <= 4);
                assert_eq!(r.owner.is_some(), r.task.state == TaskState::Processing);
            }
        }
        assert!(store.iter().all(|r| r.task.state.is_final()), "seed {seed}");
        assert!(store.iter().any(|r| r.task.state == TaskState::Processed));
        errors += store
            .iter()
            .filter(|r| r.task.state == TaskState::Error)
            .count();
    }
    // The interesting paths were taken.
    assert!(
        sweeps > 0 && lost_races > 0 && errors > expired && expired > 0,
        "{sweeps} sweeps, {lost_races} lost races, {errors} errors ({expired} expired)"
    );
}

#[test]
fn retention_a_task_is_not_claimed_past_its_age_and_expires_instead() {
    let q = Queue::new(
        QueueConfig::new()
            .lease_ms(100.0)
            .max_failures(10)
            .max_retention_ms(1000.0)
            .backoff(Config::new().base_ms(300.0).jitter(Jitter::None)),
    )
    .unwrap();
    let t = Task::new(5000.0, 1);
    assert_eq!(
        q.due(&t, 6000.0),
        Due::Claim,
        "at created_at + retention: still claimed"
    );
    assert_eq!(q.due(&t, 6000.5), Due::Expire, "after it: expired");
    assert_eq!(q.claim(&t, 6000.5), None);
    let e = q.expire(&t, 6000.5).unwrap();
    assert_eq!((e.state, e.failure_count), (TaskState::Error, 0));
    assert_eq!(q.due(&e, 7000.0), Due::Wait, "final");
    assert_eq!(q.expire(&e, 7000.0), None);
    // A failure whose retry would come after the retention: expired at once,
    // not after a wait for a retry that cannot happen.
    let c = q.claim(&t, 5600.0).unwrap();
    let f = q.fail(&c, 5650.0).unwrap(); // retry at 5950: within
    assert_eq!(
        (f.state, q.due(&f, 5650.0)),
        (TaskState::Pending, Due::Wait)
    );
    let f2 = q.fail(&q.claim(&f, 5950.0).unwrap(), 5960.0).unwrap(); // retry at 6560: too late
    assert_eq!(f2.next_attempt_at, 6560.0);
    assert_eq!(q.due(&f2, 5960.0), Due::Expire);
    // A delayed enqueue beyond the retention can never run.
    assert_eq!(
        q.due(&Task::new(0.0, 1).not_before(1000.5), 0.0),
        Due::Expire
    );
    assert_eq!(
        q.due(&Task::new(0.0, 1).not_before(1000.0), 1000.0),
        Due::Claim
    );
    // Processing tasks finish their lease; the retention acts on the outcome.
    let late = q.claim(&Task::new(0.0, 1), 990.0).unwrap();
    assert_eq!(q.due(&late, 1050.0), Due::Wait);
    assert_eq!(
        q.complete(&late, 1050.0).unwrap().state,
        TaskState::Processed
    );
    assert_eq!(q.due(&q.sweep(&late, 1091.0).unwrap(), 1091.0), Due::Expire);
    // A NaN time never comes: too old rather than waiting forever.
    let mut nan = Task::new(0.0, 1);
    nan.created_at = f64::NAN;
    assert_eq!(q.due(&nan, 0.0), Due::Expire);
    // No retention (the default): never expires.
    let forever = queue(100.0, 3);
    assert_eq!(forever.due(&Task::new(0.0, 1), 1e15), Due::Claim);
    assert_eq!(
        Queue::new(QueueConfig::new().max_retention_ms(f64::NAN)).err(),
        Some(QueueError::MaxRetentionMs)
    );
    assert_eq!(
        Queue::new(QueueConfig::new().max_retention_ms(-1.0)).err(),
        Some(QueueError::MaxRetentionMs)
    );
    assert!(
        QueueError::MaxRetentionMs
            .message()
            .starts_with("maxRetentionMs")
    );
}

#[test]
fn retry_now_brings_a_failed_task_forward_and_leaves_the_rest() {
    let q = queue(100.0, 5);
    let c = q.claim(&Task::new(0.0, 1), 0.0).unwrap();
    let f = q.fail(&c, 10.0).unwrap();
    assert_eq!(f.next_attempt_at, 110.0);
    let now = q.retry_now(&f, 50.0).unwrap();
    assert_eq!((now.next_attempt_at, now.failure_count), (50.0, 1));
    assert_eq!(q.due(&now, 50.0), Due::Claim);
    assert_eq!(q.retry_now(&now, 50.0), None, "already due");
    assert_eq!(q.retry_now(&c, 50.0), None, "processing");
    assert_eq!(
        q.retry_now(&Task::new(0.0, 1).not_before(500.0), 50.0),
        None,
        "never failed: a delayed enqueue keeps its time"
    );
    let mut nan = f;
    nan.next_attempt_at = f64::NAN;
    assert_eq!(q.retry_now(&nan, 50.0), None);
}
