//! The Rust examples of the docs are doctests, word for word: each
//! ```` ```rust ```` block of `docs/rust.md` ("From Rust") and of the README
//! (its quick start) must be a doc example of `core/src/retry.rs` (run by
//! `cargo test`, on tokio), of the web crate (`web/src/lib.rs`, compiled for
//! wasm32 by `cargo test --doc --target wasm32-unknown-unknown`) or of
//! `core/README.md` (the core's crate documentation, run by `cargo test`),
//! so the docs cannot drift from code that compiles and runs. (Here, not in
//! the web crate: `npm test` builds that crate for wasm32 only.)
#![cfg(not(target_arch = "wasm32"))]

const FROM_RUST: &str = include_str!("../../docs/rust.md");
const README: &str = include_str!("../../README.md");

/// Rust sources whose doc comments hold the examples.
const DOCUMENTED: [(&str, &str); 2] = [
    ("core/src/retry.rs", include_str!("../../core/src/retry.rs")),
    ("web/src/lib.rs", include_str!("../../web/src/lib.rs")),
];
/// Markdown that is itself a crate's documentation (`#![doc = include_str!(…)]`).
const DOCUMENTED_MARKDOWN: [(&str, &str); 1] =
    [("core/README.md", include_str!("../../core/README.md"))];

/// The lines of `text` from the `heading` line to the next `## ` heading.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| *l != heading);
    let first = lines.next().expect("docs/rust.md has the section");
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

/// The ```` ```rust ```` blocks of markdown lines.
fn rust_examples<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    blocks(lines)
        .into_iter()
        .filter(|(info, _)| info == "rust")
        .map(|(_, code)| code)
        .collect()
}

/// Panics unless `example` (from `page`) is a doctest that runs or compiles.
fn assert_doctest(page: &str, example: &str) {
    let doc_comments = DOCUMENTED.iter().flat_map(|(file, source)| {
        blocks(doc_lines(source))
            .into_iter()
            .map(move |b| (*file, b))
    });
    let markdown = DOCUMENTED_MARKDOWN
        .iter()
        .flat_map(|(file, source)| blocks(source.lines()).into_iter().map(move |b| (*file, b)));
    let home = doc_comments
        .chain(markdown)
        .find(|(_, (_, code))| code == example)
        .map(|(file, (info, _))| (file, info));
    let Some((file, info)) = home else {
        panic!(
            "this {page} example is no doctest (core/src/retry.rs, web/src/lib.rs, core/README.md):\n{example}"
        )
    };
    // Run, or at least compiled: never ignored.
    assert!(
        info.is_empty() || info == "rust" || info == "no_run",
        "{file}: the example is marked ```{info}"
    );
}

#[test]
fn every_rust_example_of_the_from_rust_page_is_a_doctest() {
    let examples = rust_examples(section(FROM_RUST, "## From Rust"));
    assert_eq!(examples.len(), 2, "native and wasm: {examples:#?}");
    for example in &examples {
        assert_doctest("docs/rust.md", example);
    }
}

#[test]
fn every_rust_example_of_the_readme_is_a_doctest() {
    let examples = rust_examples(README.lines());
    assert_eq!(examples.len(), 1, "the quick start: {examples:#?}");
    for example in &examples {
        assert_doctest("README.md", example);
    }
}
