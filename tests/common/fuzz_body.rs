//! The options-to-delay path under arbitrary input: the options record
//! exactly as the JS side could write it (any bit pattern in every field:
//! NaN, infinities, negative zero, subnormals, huge), decoded, then stepped
//! and sampled. Shared by the cargo-fuzz target (`fuzz/`) and a proptest in
//! the normal test run.

use wasm_backoff::calc::decode;
use wasm_backoff::schema::RECORD_LEN;
use wasm_backoff_core::{Backoff, MAX_DELAY_MS, seeded_rng};

/// Panics (the fuzzer's signal) if any invariant breaks.
pub fn check(data: &[u8]) {
    let mut record = [f64::NAN; RECORD_LEN];
    for (i, chunk) in data.chunks(8).take(RECORD_LEN).enumerate() {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        // A byte pattern 0xFF.. is NaN ("not given"): keep it reachable.
        record[i] = f64::from_le_bytes(b);
    }
    let tail = |i: usize, dflt: u8| data.get(RECORD_LEN * 8 + i).copied().unwrap_or(dflt);
    let steps = tail(0, 50) as usize;
    let retry = u32::from_le_bytes([tail(1, 1), tail(2, 0), tail(3, 0), tail(4, 0)]);
    let Ok((cfg, seed)) = decode(&record) else {
        return; // rejected with an error code: fine
    };
    let mut b = Backoff::new(cfg, seeded_rng(seed)).expect("decode returns only valid configs");
    let mut total = 0.0;
    for _ in 0..steps {
        match b.next_delay() {
            Some(d) => {
                assert!(
                    d.is_finite() && (0.0..=MAX_DELAY_MS).contains(&d),
                    "delay {d} from {cfg:?}"
                );
                total += d;
            }
            None => break,
        }
    }
    if let Some(limit) = cfg.max_elapsed_ms {
        assert!(total <= limit, "elapsed {total} > {limit}");
    }
    let d = b.sample_at(retry.max(1));
    assert!(
        d.is_finite() && (0.0..=MAX_DELAY_MS).contains(&d),
        "sample {d} from {cfg:?}"
    );
}
