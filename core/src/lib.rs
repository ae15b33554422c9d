//! The pure calculator of wasm-backoff.
//!
//! A backoff is an iterator of delays (as in `backon`): [`Backoff::next_delay`]
//! hands out the wait before the next retry, `None` means give up, and
//! [`Backoff::reset`] is what a success does. Everything here is `no_std`,
//! allocates nothing and never reads a clock, so the same code runs on a
//! microcontroller, natively in tests and inside the WebAssembly module, and a
//! seeded schedule is bit-identical in all of them.
//!
//! Three concerns live apart (as in tower's `retry`): [`Config`] says *how
//! long* (strategy, jitter, limits) and is validated once, [`Backoff`] keeps
//! the per-operation state, and [`Rng`] supplies the randomness (seedable,
//! so tests and demos are reproducible).
//!
//! ```
//! use wasm_backoff_core::{Backoff, Config, Jitter, seeded_rng};
//! let cfg = Config::new().base_ms(100.0).jitter(Jitter::None).max_attempts(Some(4));
//! let mut b = Backoff::new(cfg, seeded_rng(7)).unwrap();
//! assert_eq!(b.next_delay(), Some(100.0));
//! assert_eq!(b.next_delay(), Some(200.0));
//! assert_eq!(b.next_delay(), Some(400.0));
//! assert_eq!(b.next_delay(), None); // 4 tries = 1 first try + 3 retries
//! b.reset();
//! assert_eq!(b.next_delay(), Some(100.0));
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backoff;
mod budget;
mod config;
pub mod gate;
mod math;
mod preset;
#[cfg(feature = "queue")]
pub mod queue;
pub mod retry_after;
mod rng;
mod stats;

pub use backoff::Backoff;
pub use budget::{BudgetError, RetryBudget};
pub use config::{AtCeiling, Config, ConfigError, Jitter, SlotMode, Strategy};
pub use math::MAX_DELAY_MS;
pub use preset::Preset;
pub use rng::{seeded_rng, unit_f64, DefaultRng, Rng, Xoshiro256pp};
pub use stats::{delay_stats, DelayStats};
