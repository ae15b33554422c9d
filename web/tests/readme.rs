//! The README's "From Rust" examples are doctests, word for word: each
//! ```` ```rust ```` block of that section must be a doc example of
//! `core/src/retry.rs` (run by `cargo test`, on tokio) or of this crate
//! (`src/lib.rs`, compiled by `cargo test`), so the README cannot drift
//! from code that compiles and runs.
#![cfg(not(target_arch = "wasm32"))]

const README: &str = include_str!("../../README.md");

const DOCUMENTED: [(&str, &str); 2] = [
    ("core/src/retry.rs", include_str!("../../core/src/retry.rs")),
    ("web/src/lib.rs", include_str!("../src/lib.rs")),
];

/// The lines of `text` from the `heading` line to the next `## ` heading.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| *l != heading);
    let first = lines.next().expect("the README has the section");
    std::iter::once(first)
        .chain(lines.take_while(|l| !l.starts_with("## ")))
        .collect()
}

/// The fenced code blocks of markdown lines: (info string, code).
fn blocks<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in lines {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.to_string(), Vec::new())),
            (Some(_), Some("")) => {
                let (info, code) = open.take().unwrap();
                out.push((info, code.join("\n")));
            }
            (Some((_, code)), _) => code.push(line),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

/// The doc-comment lines (`//!`, `///`) of a Rust source, as markdown.
fn doc_lines(source: &str) -> impl Iterator<Item = &str> {
    source.lines().filter_map(|l| {
        let l = l.trim_start();
        let doc = l.strip_prefix("//!").or_else(|| l.strip_prefix("///"))?;
        Some(doc.strip_prefix(' ').unwrap_or(doc))
    })
}

#[test]
fn every_rust_example_of_the_from_rust_section_is_a_doctest() {
    let examples: Vec<String> = blocks(section(README, "## From Rust"))
        .into_iter()
        .filter(|(info, _)| info == "rust")
        .map(|(_, code)| code)
        .collect();
    assert_eq!(examples.len(), 2, "native and wasm: {examples:#?}");
    for example in &examples {
        let home = DOCUMENTED.iter().find_map(|(file, source)| {
            blocks(doc_lines(source))
                .into_iter()
                .find(|(_, code)| code == example)
                .map(|(info, _)| (file, info))
        });
        let Some((file, info)) = home else {
            panic!(
                "this README example is no doctest (core/src/retry.rs, web/src/lib.rs):\n{example}"
            )
        };
        // Run, or at least compiled: never ignored.
        assert!(
            info.is_empty() || info == "rust" || info == "no_run",
            "{file}: the example is marked ```{info}"
        );
    }
}
