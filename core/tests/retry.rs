//! The retry helper (feature `std`) on tokio's paused clock: the waits are
//! the schedule's, to the millisecond, and no real time passes.
#![cfg(feature = "std")]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::time::{Instant, sleep};
use wasm_backoff_core::retry::retry;
use wasm_backoff_core::{Config, Jitter, Preset};

#[derive(Debug, PartialEq)]
enum Error {
    Busy,
    Fatal,
}

fn no_jitter() -> Config {
    Config::new().jitter(Jitter::None).max_attempts(Some(5))
}

#[tokio::test(start_paused = true)]
async fn waits_the_schedule_then_succeeds() {
    let tries = AtomicU32::new(0);
    let t0 = Instant::now();
    let mut waits = Vec::new();
    let v = retry(|| async {
        if tries.fetch_add(1, Ordering::SeqCst) < 3 {
            Err(Error::Busy)
        } else {
            Ok("done")
        }
    })
    .with(no_jitter())
    .notify(|_: &Error, d: Duration| waits.push(d))
    .run(sleep)
    .await;
    assert_eq!(v, Ok("done"));
    assert_eq!(tries.load(Ordering::SeqCst), 4);
    assert_eq!(waits, [100, 200, 400].map(Duration::from_millis));
    assert_eq!(
        t0.elapsed(),
        Duration::from_millis(700),
        "virtual time: exactly the waits"
    );
}

#[tokio::test(start_paused = true)]
async fn gives_up_after_max_attempts_with_the_last_error() {
    let tries = AtomicU32::new(0);
    let v: Result<(), _> = retry(|| async {
        tries.fetch_add(1, Ordering::SeqCst);
        Err(Error::Busy)
    })
    .with(no_jitter())
    .run(sleep)
    .await;
    assert_eq!(v, Err(Error::Busy));
    assert_eq!(
        tries.load(Ordering::SeqCst),
        5,
        "maxAttempts counts the first try"
    );
}

#[tokio::test(start_paused = true)]
async fn an_error_that_is_not_retryable_returns_at_once() {
    let tries = AtomicU32::new(0);
    let t0 = Instant::now();
    let v: Result<(), _> = retry(|| async {
        tries.fetch_add(1, Ordering::SeqCst);
        Err(Error::Fatal)
    })
    .with(no_jitter())
    .when(|e: &Error| *e == Error::Busy)
    .run(sleep)
    .await;
    assert_eq!(v, Err(Error::Fatal));
    assert_eq!(
        (tries.load(Ordering::SeqCst), t0.elapsed()),
        (1, Duration::ZERO)
    );
}

#[tokio::test(start_paused = true)]
async fn a_seeded_preset_waits_the_same_every_run() {
    let run = || async {
        let mut waits = Vec::new();
        let _: Result<(), _> = retry(|| async { Err(Error::Busy) })
            .with(Preset::Aws.config())
            .seed(7)
            .notify(|_: &Error, d: Duration| waits.push(d))
            .run(sleep)
            .await;
        waits
    };
    let (a, b) = (run().await, run().await);
    assert_eq!(a.len(), 2, "aws: 3 attempts");
    assert_eq!(a, b);
    assert!(a[0] < Duration::from_millis(200) && a[1] < Duration::from_millis(400));
}

#[test]
fn the_blocking_variant_sleeps_the_thread() {
    let mut tries = 0;
    let t0 = std::time::Instant::now();
    let v = retry(|| {
        tries += 1;
        if tries < 3 {
            Err(Error::Busy)
        } else {
            Ok(tries)
        }
    })
    .with(Config::new().base_ms(2.0).jitter(Jitter::None))
    .call();
    assert_eq!(v, Ok(3));
    assert!(t0.elapsed() >= Duration::from_millis(6), "2 ms + 4 ms");
}

#[test]
#[should_panic(expected = "invalid retry schedule: baseMs")]
fn an_invalid_schedule_is_a_programming_error() {
    let _ = retry(|| Ok::<(), ()>(())).with(Config::new().base_ms(-1.0));
}

// `drive`: the loop under a policy (what the web crate's fetch_with_backoff
// runs), on the same paused clock.

use std::cell::RefCell;
use wasm_backoff_core::policy::End;
use wasm_backoff_core::retry::{Done, Pause, Policy, Verdict};

/// A policy that retries every `Err` (with the server-named wait it
/// carries) and ends on `Ok`, and records what it was told.
#[derive(Default)]
struct Recorder {
    verdicts: RefCell<Vec<u32>>,
    pauses: RefCell<Vec<Pause>>,
}

type Answer = Result<&'static str, Option<f64>>;

impl Policy<Answer> for &Recorder {
    fn verdict(&mut self, attempt: u32, outcome: &Answer) -> Verdict {
        self.verdicts.borrow_mut().push(attempt);
        match outcome {
            Ok(_) => Verdict::Stop(End::Success),
            Err(hint_ms) => Verdict::Retry { hint_ms: *hint_ms },
        }
    }

    fn notify(&mut self, _: &Answer, pause: &Pause) {
        self.pauses.borrow_mut().push(*pause);
    }
}

/// Milliseconds of tokio's (paused) clock since `t0`.
fn ms_since(t0: Instant) -> impl FnMut() -> f64 {
    move || t0.elapsed().as_secs_f64() * 1e3
}

async fn sleep_ok(d: Duration) -> Result<(), &'static str> {
    sleep(d).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn drive_a_server_named_wait_lifts_the_delay() {
    let seen = Recorder::default();
    let t0 = Instant::now();
    let answers: [Answer; 2] = [Err(Some(300.0)), Ok("done")];
    let done = retry(|n: u32| async move { answers[n as usize - 1] })
        .with(no_jitter()) // the schedule says 100 ms
        .seed(1)
        .policy(&seen)
        .drive(sleep_ok)
        .await
        .unwrap();
    assert_eq!(
        (done.end, done.attempts, done.last),
        (End::Success, 2, Ok("done"))
    );
    let pause = seen.pauses.borrow()[0];
    assert_eq!((pause.attempt, pause.hint_ms), (1, Some(300.0)));
    // The server's 300 ms, plus up to 10 % of jitter above it (never below).
    assert!((300.0..330.0).contains(&pause.delay_ms), "{pause:?}");
    // (tokio's timer rounds up to the millisecond)
    let slept = t0.elapsed();
    assert!(
        slept >= pause.wait() && slept < pause.wait() + Duration::from_millis(1),
        "the sleep was given that wait: {slept:?}"
    );
    assert_eq!(*seen.verdicts.borrow(), [1, 2], "the attempt numbers");
}

#[tokio::test(start_paused = true)]
async fn drive_a_deadline_stops_a_wait_that_would_pass_it() {
    let seen = Recorder::default();
    let t0 = Instant::now();
    let done = retry(|_| async { Err::<&str, _>(None) })
        .with(no_jitter()) // 100, 200, 400 … ms
        .deadline(250.0, ms_since(t0))
        .policy(&seen)
        .drive(sleep_ok)
        .await
        .unwrap();
    // 0 + 100 ms fits in 250 ms; 100 + 200 ms would not: not started.
    assert_eq!((done.end, done.attempts), (End::Deadline, 2));
    assert_eq!(t0.elapsed(), Duration::from_millis(100));
    assert_eq!(seen.pauses.borrow().len(), 1, "told only of the wait taken");
}

#[tokio::test(start_paused = true)]
async fn drive_an_abort_in_the_sleep_ends_the_loop_with_its_reason() {
    let tries = AtomicU32::new(0);
    let sleeps = AtomicU32::new(0);
    let t0 = Instant::now();
    let r = retry(|_| async {
        tries.fetch_add(1, Ordering::SeqCst);
        Err::<(), _>(Error::Busy)
    })
    .with(no_jitter())
    .drive(|d| {
        let n = sleeps.fetch_add(1, Ordering::SeqCst);
        async move {
            sleep(d / 2).await;
            // The second wait is cut short halfway, as by an AbortSignal.
            if n == 1 {
                Err("aborted")
            } else {
                sleep(d / 2).await;
                Ok(())
            }
        }
    })
    .await;
    assert_eq!(r, Err("aborted"));
    assert_eq!(
        tries.load(Ordering::SeqCst),
        2,
        "no attempt after the abort"
    );
    assert_eq!(t0.elapsed(), Duration::from_millis(100 + 100));
}

#[tokio::test(start_paused = true)]
async fn drive_returns_the_policys_stop_reason_and_the_last_outcome() {
    let done: Done<u16> = retry(|n: u32| async move { [503, 409, 200][n as usize - 1] })
        .with(no_jitter())
        .policy(|_: u32, status: &u16| match status {
            503 => Verdict::Retry { hint_ms: None },
            409 => Verdict::Stop(End::Vetoed),
            _ => Verdict::Stop(End::Success),
        })
        .drive(sleep_ok)
        .await
        .unwrap();
    assert_eq!((done.end, done.attempts, done.last), (End::Vetoed, 2, 409));
}

#[tokio::test(start_paused = true)]
async fn drive_ends_with_the_timing_reasons() {
    // A server wait over max_retry_after_ms: that outcome at once, no wait.
    let t0 = Instant::now();
    let done = retry(|_| async { Err::<&str, _>(Some(5_000.0)) })
        .with(no_jitter())
        .max_retry_after_ms(1_000.0)
        .policy(&Recorder::default())
        .drive(sleep_ok)
        .await
        .unwrap();
    assert_eq!(
        (done.end, done.attempts, t0.elapsed()),
        (End::RetryAfter, 1, Duration::ZERO)
    );
    // The schedule's limit: max_attempts tries, then Exhausted.
    let done = retry(|_| async { Err::<&str, _>(None) })
        .with(no_jitter().max_attempts(Some(3)))
        .policy(&Recorder::default())
        .drive(sleep_ok)
        .await
        .unwrap();
    assert_eq!(
        (done.end, done.attempts, done.last),
        (End::Exhausted, 3, Err(None))
    );
}

#[tokio::test(start_paused = true)]
async fn run_keeps_to_the_deadline_too() {
    let t0 = Instant::now();
    let tries = AtomicU32::new(0);
    let v: Result<(), _> = retry(|| async {
        tries.fetch_add(1, Ordering::SeqCst);
        Err(Error::Busy)
    })
    .with(no_jitter())
    .deadline(350.0, ms_since(t0))
    .run(sleep)
    .await;
    // 100 + 200 ms fit in 350 ms; 300 + 400 would not: the last error.
    assert_eq!((v, tries.load(Ordering::SeqCst)), (Err(Error::Busy), 3));
    assert_eq!(t0.elapsed(), Duration::from_millis(300));
}

/// A policy that retries every `Err` and asks `choose` for each wait (the
/// `delay` hook of the drivers), recording the proposals it was given.
struct Chooser<F: FnMut(u32, f64) -> Choice> {
    choose: F,
    proposals: Vec<(u32, f64, Option<f64>)>,
}

impl<F: FnMut(u32, f64) -> Choice> Policy<Answer> for &mut Chooser<F> {
    fn verdict(&mut self, _: u32, outcome: &Answer) -> Verdict {
        match outcome {
            Ok(_) => Verdict::Stop(End::Success),
            Err(hint_ms) => Verdict::Retry { hint_ms: *hint_ms },
        }
    }

    fn delay(&mut self, attempt: u32, _: &Answer, proposal: f64, hint_ms: Option<f64>) -> Choice {
        self.proposals.push((attempt, proposal, hint_ms));
        (self.choose)(attempt, proposal)
    }
}

use wasm_backoff_core::policy::Choice;

#[tokio::test(start_paused = true)]
async fn drive_the_policys_delay_chooses_each_wait_or_gives_up() {
    // Attempt 1: the proposal (100 ms) halved; attempt 2 (a 300 ms server
    // wait): 7 ms, below it; attempt 3: give up.
    let answers: [Answer; 4] = [Err(None), Err(Some(300.0)), Err(None), Ok("never")];
    let mut policy = Chooser {
        choose: |attempt, proposal| match attempt {
            1 => Choice::Wait(proposal / 2.0),
            2 => Choice::Wait(7.0),
            _ => Choice::GiveUp,
        },
        proposals: Vec::new(),
    };
    let t0 = Instant::now();
    let done = retry(|n: u32| async move { answers[n as usize - 1] })
        .with(no_jitter())
        .seed(1)
        .policy(&mut policy)
        .drive(sleep_ok)
        .await
        .unwrap();
    assert_eq!(
        (done.end, done.attempts, done.last),
        (End::Vetoed, 3, Err(None))
    );
    assert_eq!(policy.proposals[0], (1, 100.0, None));
    assert_eq!(
        (policy.proposals[1].0, policy.proposals[1].2),
        (2, Some(300.0))
    );
    assert!(
        (300.0..330.0).contains(&policy.proposals[1].1),
        "lifted: {:?}",
        policy.proposals[1]
    );
    let slept = t0.elapsed();
    assert!(
        slept >= Duration::from_millis(57) && slept < Duration::from_millis(60),
        "50 + 7 ms: {slept:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn drive_a_chosen_wait_past_the_deadline_ends_the_call() {
    let mut policy = Chooser {
        choose: |_, _| Choice::Wait(5_000.0),
        proposals: Vec::new(),
    };
    let done = retry(|_| async { Err::<&str, _>(None) })
        .with(no_jitter())
        .deadline(1_000.0, ms_since(Instant::now()))
        .policy(&mut policy)
        .drive(sleep_ok)
        .await
        .unwrap();
    assert_eq!((done.end, done.attempts), (End::Deadline, 1));
    assert_eq!(policy.proposals.len(), 1);
}
