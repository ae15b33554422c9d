//! The network-failure wordings shared with the JavaScript package
//! (`isNetworkError` in js/policy.js, checked by tests/fetch/policy.test.mjs
//! against the same file): `is_network_error` must tell exactly these
//! apart. The JavaScript side matches a regular expression that xtask
//! renders (folded) from `NETWORK_ERROR_PREFIXES`; this file is what shows
//! that the folding changed nothing.

use crate::json;

use wasm_backoff_core::{NETWORK_ERROR_PREFIXES, is_network_error};

const VECTORS: &str = include_str!("network_error_vectors.json");

fn messages(kind: &str) -> Vec<String> {
    let top = json::parse(VECTORS);
    top.get(kind)
        .arr()
        .iter()
        .map(|m| m.str().to_string())
        .collect()
}

#[test]
fn network_failures_are_told_from_other_errors() {
    for m in messages("network") {
        assert!(is_network_error(&m), "a network failure: {m:?}");
    }
    for m in messages("other") {
        assert!(!is_network_error(&m), "not a network failure: {m:?}");
    }
}

#[test]
fn every_wording_is_covered_by_a_vector() {
    // Each prefix is the start of some `network` vector, so that none of
    // them goes untested on the JavaScript side either.
    let network = messages("network");
    for p in NETWORK_ERROR_PREFIXES {
        assert!(
            network.iter().any(|m| m.starts_with(p)),
            "no vector for {p:?}"
        );
    }
}
