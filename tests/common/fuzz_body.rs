//! The options-to-delay path under arbitrary input: 14 f64 fields exactly as
//! the JS side could pass them (any bit pattern: NaN, infinities, negative
//! zero, subnormals, huge), decoded, then stepped and sampled. Shared by the
//! cargo-fuzz target (`fuzz/`) and a proptest in the normal test run.

use wasm_backoff::decode;
use wasm_backoff_core::{seeded_rng, Backoff, MAX_DELAY_MS};

/// Panics (the fuzzer's signal) if any invariant breaks.
pub fn check(data: &[u8]) {
    let mut fields = [f64::NAN; 14];
    for (i, chunk) in data.chunks(8).take(14).enumerate() {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        // A byte pattern 0xFF.. is NaN ("not given"): keep it reachable.
        fields[i] = f64::from_le_bytes(b);
    }
    let steps = data.get(112).copied().unwrap_or(50) as usize;
    let retry = u32::from_le_bytes([
        data.get(113).copied().unwrap_or(1),
        data.get(114).copied().unwrap_or(0),
        data.get(115).copied().unwrap_or(0),
        data.get(116).copied().unwrap_or(0),
    ]);
    let [p, s, base, factor, cap, j, amount, attempts, elapsed, ceiling, at, mode, seed, fallback] =
        fields;
    let Ok((cfg, seed)) = decode(
        p, s, base, factor, cap, j, amount, attempts, elapsed, ceiling, at, mode, seed, fallback,
    ) else {
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
