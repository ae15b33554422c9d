#![doc = include_str!("../README.md")]
//!
//! ## Design
//!
//! Three concerns live apart (as in tower's `retry`): [`Config`] says *how
//! long* (strategy, jitter, limits) and is validated once, [`Backoff`] keeps
//! the per-operation state, and [`Rng`] supplies the randomness (seedable,
//! so tests and demos are reproducible). Everything allocates nothing and
//! never reads a clock (time is passed in), so the same code runs on a
//! microcontroller, natively and inside the WebAssembly module.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// `Display` (its `message()`) and `std::error::Error` for an error type
/// (feature `std`): one definition for the three error types.
macro_rules! error_with_message {
    ($ty:ty) => {
        #[cfg(feature = "std")]
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.message())
            }
        }

        #[cfg(feature = "std")]
        impl std::error::Error for $ty {}
    };
}
pub(crate) use error_with_message;

mod backoff;
pub mod breaker;
mod budget;
mod config;
mod decimal;
pub mod gate;
pub mod limiter;
mod math;
mod network;
pub mod policy;
mod preset;
#[cfg(feature = "queue")]
pub mod queue;
#[cfg(feature = "std")]
pub mod retry;
pub mod retry_after;
mod rng;
mod stats;

pub use backoff::Backoff;
pub use budget::{BudgetError, RetryBudget};
pub use config::{AtCeiling, Config, ConfigError, Jitter, SlotMode, Strategy};
pub use math::MAX_DELAY_MS;
pub use network::{NETWORK_ERROR_PREFIXES, REFUSED_REQUEST_CODES, is_network_error};
pub use preset::Preset;
pub use retry_after::{REMAINING_HEADERS, SERVER_WAIT_HEADERS, server_wait, spent_wait};
pub use rng::{DefaultRng, Rng, Xoshiro256pp, seeded_rng, unit_f64};
#[cfg(feature = "getrandom")]
pub use rng::{entropy_rng, entropy_seed};
pub use stats::{DelayStats, delay_stats};
