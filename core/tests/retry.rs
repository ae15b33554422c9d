//! The retry helper (feature `std`) on tokio's paused clock: the waits are
//! the schedule's, to the millisecond, and no real time passes.
#![cfg(feature = "std")]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::time::{sleep, Instant};
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
