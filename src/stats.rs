//! The exact statistics of a delay (`backoffStats` in js/stats.js, the queue module only).

use crate::calc::decode;
use crate::io::{answer, record};

/// Answers `schema::STATS` for the delay before retry `attempt` of the
/// schedule in the options record: [1, min, max, p50, p90, mean] when the
/// law has a closed form, [0, …] when it has none (JS samples instead) or
/// the options were rejected (JS validated them first).
#[unsafe(no_mangle)]
pub extern "C" fn stats(attempt: u32) {
    match decode(&record())
        .ok()
        .and_then(|(cfg, _)| wasm_backoff_core::delay_stats(&cfg, attempt))
    {
        Some(s) => answer(&[1.0, s.min, s.max, s.p50, s.p90, s.mean]),
        None => answer(&[0.0]),
    }
}
