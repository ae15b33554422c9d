//! Native cost of one delay: `wasm-backoff-core`'s `next_delay` against
//! backon's `ExponentialBuilder` with jitter, the same schedule (100 ms base,
//! factor 2, 20 s cap, full jitter for us; backon's jitter adds U[0, delay)
//! on top), each iterator run 20 delays then rebuilt, interleaved rounds,
//! medians. Run: `cargo run --release --manifest-path bench/rust/Cargo.toml`.
use backon::BackoffBuilder;
use std::hint::black_box;
use std::time::{Duration, Instant};
use wasm_backoff_core::{seeded_rng, Backoff, Config};

const PER_SCHEDULE: usize = 20;
const SCHEDULES: usize = 50_000;

fn ours() -> Duration {
    let t0 = Instant::now();
    let mut sum = 0.0;
    for i in 0..SCHEDULES {
        let mut b = Backoff::new(Config::new(), seeded_rng(i as u64)).unwrap();
        for _ in 0..PER_SCHEDULE {
            sum += b.next_delay().unwrap();
        }
    }
    black_box(sum);
    t0.elapsed()
}

/// Ours without making a schedule per run: the cost of next_delay alone.
fn ours_steps() -> Duration {
    let mut b = Backoff::new(Config::new(), seeded_rng(1)).unwrap();
    let t0 = Instant::now();
    let mut sum = 0.0;
    for _ in 0..SCHEDULES {
        for _ in 0..PER_SCHEDULE {
            sum += b.next_delay().unwrap();
        }
        b.reset();
    }
    black_box(sum);
    t0.elapsed()
}

fn backon() -> Duration {
    let builder = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_factor(2.0)
        .with_max_delay(Duration::from_secs(20))
        .with_max_times(PER_SCHEDULE)
        .with_jitter();
    let t0 = Instant::now();
    let mut sum = Duration::ZERO;
    for _ in 0..SCHEDULES {
        for d in builder.build() {
            sum += d;
        }
    }
    black_box(sum);
    t0.elapsed()
}

fn main() {
    let n = (SCHEDULES * PER_SCHEDULE) as f64;
    let (mut a, mut s, mut b) = (vec![], vec![], vec![]);
    for round in 0..15 {
        // order rotated per round
        let order: [&dyn Fn() -> Duration; 3] = [&ours, &ours_steps, &backon];
        for k in 0..3 {
            let i = (k + round) % 3;
            let ns = order[i]().as_nanos() as f64 / n;
            [&mut a, &mut s, &mut b][i].push(ns);
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
        v[v.len() / 2]
    };
    let (a, s, b) = (med(&mut a), med(&mut s), med(&mut b));
    println!("| contender | ns per delay (median of 15 rounds) | ratio to backon |");
    println!("|---|---:|---:|");
    println!("| wasm-backoff-core `next_delay`, a new seeded schedule per 20 delays | {a:.2} | {:.2} |", a / b);
    println!("| wasm-backoff-core `next_delay`, one schedule, `reset()` per 20 | {s:.2} | {:.2} |", s / b);
    println!("| backon 1.6.0 `ExponentialBuilder` + jitter, a new iterator per 20 | {b:.2} | 1.00 |");
}
