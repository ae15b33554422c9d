//! Native half of the cross-runtime comparison (see golden/cases.rs).
//! `UPDATE_GOLDEN=1 cargo test -p wasm-backoff-core --test it golden::` rewrites
//! the file after an intended change of the streams (a breaking change for
//! anyone who stored seeds: say so in the changelog).

#[path = "golden/cases.rs"]
mod cases;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/seeded.json");

#[test]
fn native_schedules_match_the_golden_file() {
    let rendered = cases::render();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(FILE, &rendered).unwrap();
    }
    let stored = std::fs::read_to_string(FILE).expect("core/tests/golden/seeded.json");
    assert_eq!(
        rendered, stored,
        "native schedules differ from core/tests/golden/seeded.json"
    );
}
