//! `cargo run -p xtask [-- <out file>]`: renders the boundary description
//! (`src/schema.rs`) as an ES module for the JavaScript side (default
//! `js/gen/boundary.js`), and beside it `network.js`, the wordings of
//! network failures (the core's `NETWORK_ERROR_PREFIXES`), and
//! `www/gen/lists.js`, the lists the demo page's pickers show.
//! scripts/build.sh and `npm run lint` run it; the output is not committed.

use std::fmt::Write as _;
use wasm_backoff::schema::{self, Error, FIELDS, Kind, SECTIONS};

fn list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", quoted.join(", "))
}

fn render() -> String {
    let mut js = String::from(
        "// Generated from src/schema.rs by `cargo run -p xtask`: do not edit (scripts/build.sh regenerates it).\n\n",
    );
    let lists: [(&str, &str, &[&str]); 14] = [
        (
            "PRESETS",
            "`preset` values, in the order the record uses",
            schema::PRESETS,
        ),
        ("STRATEGIES", "`strategy` values", schema::STRATEGIES),
        (
            "JITTERS",
            "`jitter` kinds: the three strings, then `{ ratio }` and `{ addMaxMs }`",
            schema::JITTERS,
        ),
        ("AT_CEILING", "`atCeiling` values", schema::AT_CEILING),
        ("SLOT_MODES", "`slotMode` values", schema::SLOT_MODES),
        ("OVERFLOWS", "gate `overflow` values", schema::OVERFLOWS),
        (
            "PHASES",
            "gate phases, by the number the status reports",
            schema::PHASES,
        ),
        (
            "TASK_STATES",
            "task states, by the number a task record carries",
            schema::TASK_STATES,
        ),
        (
            "CIRCUIT",
            "the circuit's state for each gate phase (onStateChange)",
            schema::CIRCUIT,
        ),
        (
            "CAUSES",
            "why a gate's phase last changed, by the number the status reports",
            schema::CAUSES,
        ),
        ("MODES", "gate `mode` values", schema::MODES),
        (
            "SAVED_STATES",
            "a saved target's state, by the number the core saves",
            schema::SAVED_STATES,
        ),
        ("LIMIT_KINDS", "gate `limit` values", schema::LIMIT_KINDS),
        (
            "SAVED",
            "names of a saved target's numbers, by offset (then the window's calls and failures)",
            &schema::SAVED,
        ),
    ];
    for (name, doc, items) in lists {
        writeln!(js, "/** {doc}. */\nexport const {name} = {};", list(items)).unwrap();
    }
    // The readers of the options record: per section, its first offset and a row per field.
    let choice_lists = [
        ("PRESETS", schema::PRESETS),
        ("STRATEGIES", schema::STRATEGIES),
        ("AT_CEILING", schema::AT_CEILING),
        ("SLOT_MODES", schema::SLOT_MODES),
        ("OVERFLOWS", schema::OVERFLOWS),
        ("MODES", schema::MODES),
        ("LIMIT_KINDS", schema::LIMIT_KINDS),
    ];
    for (name, from, to) in SECTIONS {
        writeln!(
            js,
            "\n/**\n * The {name} fields of the options record: [first offset, a row per field: [option name, how JS\n * reads it (0 a number, 1 by hand or not an option, else the list of its values), the message a wrong type\n * throws (the same strings as MESSAGES: measured, gzip makes them cheaper than codes)]].\n * @type {{[number, [string, 0 | 1 | string[], string][]]}}\n */\nexport const {} = [{}, [",
            name.to_uppercase(),
            from as usize
        )
        .unwrap();
        for (field, key, kind, err) in &FIELDS[from as usize..to] {
            let k = match kind {
                Kind::Number => "0".to_string(),
                Kind::Special => "1".to_string(),
                Kind::Choice(l) => choice_lists
                    .iter()
                    .find(|c| c.1 == *l)
                    .expect("a listed choice")
                    .0
                    .to_string(),
            };
            writeln!(
                js,
                "  [{key:?}, {k}, {:?}], // {} {field:?}",
                err.message(),
                *field as usize
            )
            .unwrap();
        }
        js.push_str("]];\n");
    }
    writeln!(js, "\n/** Offsets of the fields in the options record. */").unwrap();
    for (field, ..) in FIELDS {
        let name = format!("{field:?}");
        writeln!(js, "export const F_{} = {};", snake(&name), field as usize).unwrap();
    }
    let full = Error::FIRST_FULL.code() as usize;
    writeln!(js, "\n/** Error messages by code (a constructor answers minus the code): the small module's. */\nexport const MESSAGES = [").unwrap();
    for e in &Error::ALL[..full] {
        writeln!(js, "  {:?}, // {} {e:?}", e.message(), e.code()).unwrap();
    }
    // Each list extends the one before (one copy of each message in a bundle;
    // `concat` marked pure, so an entry that uses neither drops both): the
    // gate module's errors, then the queue's, which the gate never answers.
    let queue = Error::FIRST_QUEUE.code() as usize;
    js.push_str("];\n/** The gate module's error messages by code (the small module's, then the gate's). */\nexport const GATE_MESSAGES = /* @__PURE__ */ MESSAGES.concat([\n");
    for e in &Error::ALL[full..queue] {
        writeln!(js, "  {:?}, // {} {e:?}", e.message(), e.code()).unwrap();
    }
    js.push_str("]);\n/** Every error message by code (the full module's errors too: the queue's). */\nexport const ALL_MESSAGES = /* @__PURE__ */ GATE_MESSAGES.concat([\n");
    for e in &Error::ALL[queue..] {
        writeln!(js, "  {:?}, // {} {e:?}", e.message(), e.code()).unwrap();
    }
    js.push_str("]);\n");
    writeln!(js, "/** Error codes by name. */").unwrap();
    for e in Error::ALL {
        writeln!(
            js,
            "export const E_{} = {};",
            snake(&format!("{e:?}")),
            e.code()
        )
        .unwrap();
    }
    let records: [(&str, &[&str]); 4] = [
        ("GATE", &schema::GATE_STATUS),
        ("COUNTER", &schema::COUNTERS),
        ("TASK", &schema::TASK),
        ("STAT", &schema::STATS),
    ];
    writeln!(js, "\n/** Offsets in the result record, per answer. */").unwrap();
    for (prefix, names) in records {
        for (i, n) in names.iter().enumerate() {
            writeln!(js, "export const {prefix}_{} = {i};", snake(n)).unwrap();
        }
    }
    writeln!(
        js,
        "\n/** Answers with a meaning of their own (see src/schema.rs CODES). */"
    )
    .unwrap();
    for (name, v) in schema::CODES {
        writeln!(js, "export const {name} = {v};").unwrap();
    }
    writeln!(
        js,
        "\n/** The headers that may name a wait, in the order they are read (the core's server_wait). */\nexport const SERVER_WAIT_HEADERS = {:?};\n/** The headers that say how many requests remain, in the order they are read (the core's spent_wait). */\nexport const REMAINING_HEADERS = {:?};",
        wasm_backoff_core::SERVER_WAIT_HEADERS,
        wasm_backoff_core::REMAINING_HEADERS
    )
    .unwrap();
    writeln!(js, "\n/** Limits both sides use. */").unwrap();
    for (name, v) in schema::LIMITS {
        writeln!(js, "export const {name} = {v};").unwrap();
    }
    js
}

/// The fetch drivers' network-failure rule, a module of its own: only the
/// fetch entry imports it, so the `wasm-backoff/backoff` chunk (which shares
/// `boundary.js` with it) does not carry it.
fn render_network() -> String {
    let prefixes = wasm_backoff_core::NETWORK_ERROR_PREFIXES;
    // Letters and spaces (the core's doctest checks it): no regex syntax.
    assert!(
        prefixes
            .iter()
            .all(|p| p.bytes().all(|b| b == b' ' || b.is_ascii_alphabetic()))
    );
    // Folded where that is shorter and means the same (measured: 8 B of
    // gzip less for `wasm-backoff` than the plain list): `Network error`
    // with `network error` as `[Nn]etwork error`, `A…` with ` A…` as ` ?A…`.
    let has = |s: &str| prefixes.contains(&s);
    let mut alternatives: Vec<String> = Vec::new();
    for p in prefixes {
        let (first, rest) = p.split_at(1);
        let (upper, lower) = (first.to_ascii_uppercase(), first.to_ascii_lowercase());
        let cased = upper != lower;
        // ` A…` and `network…` are written with their twins `A…`, `Network…`.
        if (first == " " && has(rest))
            || (cased && first == lower && has(&format!("{upper}{rest}")))
        {
            continue;
        }
        alternatives.push(if has(&format!(" {p}")) {
            format!(" ?{p}")
        } else if cased && first == upper && has(&format!("{lower}{rest}")) {
            format!("[{upper}{lower}]{rest}")
        } else {
            p.to_string()
        });
    }
    // The folded alternatives, spelled out again, are the prefixes exactly.
    let mut spelled: Vec<String> = alternatives
        .iter()
        .flat_map(|a| match (a.strip_prefix(" ?"), a.as_bytes()) {
            (Some(p), _) => vec![p.to_string(), format!(" {p}")],
            (None, [b'[', u, l, b']', ..]) => {
                let rest = &a[4..];
                vec![
                    format!("{}{rest}", *u as char),
                    format!("{}{rest}", *l as char),
                ]
            }
            _ => vec![a.clone()],
        })
        .collect();
    let mut want: Vec<String> = prefixes.iter().map(|p| p.to_string()).collect();
    spelled.sort();
    want.sort();
    assert_eq!(spelled, want, "the folded regular expression");
    format!(
        "// Generated from core/src/network.rs and core/src/policy.rs by `cargo run -p xtask`: do not edit.\n\n\
         /** How the message of a network failure of fetch begins, in each runtime (the core's NETWORK_ERROR_PREFIXES). */\n\
         export const NETWORK_ERROR = /^(?:{})/;\n\n\
         /** The `cause.code` of a request fetch refused to send (the core's REFUSED_REQUEST_CODES). */\n\
         export const REFUSED_REQUEST = /^(?:{})$/;\n{}",
        alternatives.join("|"),
        wasm_backoff_core::REFUSED_REQUEST_CODES.join("|"),
        render_policy()
    )
}

/// The retry policy's lists, defaults and reasons (the core's `policy`
/// module), for js/policy.js: written once in Rust.
fn render_policy() -> String {
    use wasm_backoff_core::limiter as l;
    use wasm_backoff_core::policy as p;
    let quoted = |l: &[&str]| {
        l.iter()
            .map(|m| format!("'{m}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let numbers = |l: &[u16]| l.iter().map(u16::to_string).collect::<Vec<_>>().join(", ");
    let ends: Vec<&str> = p::End::ALL.iter().map(|e| e.name()).collect();
    format!(
        "\n/** Methods retried by default: those RFC 9110 §9.2.2 calls idempotent, and QUERY (the core's IDEMPOTENT_METHODS). */\n\
         export const METHODS = [{}];\n\
         /** Statuses retried by default (DEFAULT_RETRY_ON). */\n\
         export const RETRY_ON = [{}];\n\
         /** Statuses retried whenever the server named a wait (SERVER_WAIT_STATUSES). */\n\
         export const SERVER_WAIT_STATUSES = [{}];\n\
         /** Statuses that are throttling: their retries wait on throttleBaseMs (THROTTLE_STATUSES). */\n\
         export const THROTTLE_STATUSES = [{}];\n\
         /** The throttling base by default, as a multiple of the schedule's base (DEFAULT_THROTTLE_BASE_FACTOR). */\n\
         export const THROTTLE_BASE_FACTOR = {};\n\
         /** The header of a server's advice to retry, `true` or `false` (SHOULD_RETRY_HEADER). */\n\
         export const SHOULD_RETRY_HEADER = '{}';\n\
         /** Tries in all by default (DEFAULT_MAX_ATTEMPTS). */\n\
         export const MAX_ATTEMPTS = {};\n\
         /** The longest server-named wait waited for by default, ms (DEFAULT_MAX_RETRY_AFTER_MS). */\n\
         export const MAX_RETRY_AFTER_MS = {};\n\
         /** Why a call ends, as onDone is told (End, in wire order). */\n\
         export const END_REASONS = [{}];\n\
         \n/** The adaptive limiter's constants that the fleet's limiter (js/fleet/limiter.js) shares with the core's (core/src/limiter.rs). */\n\
         /** The cut at a throttle (BETA). */\n\
         export const LIMITER_BETA = {};\n\
         /** The rate never exceeds this many times the successes measured (OK_GAIN). */\n\
         export const LIMITER_OK_GAIN = {};\n\
         /** The floor of the rate, req/s (MIN_RATE). */\n\
         export const LIMITER_MIN_RATE = {};\n\
         /** Tokens saved up at most (BURST). */\n\
         export const LIMITER_BURST = {};\n",
        quoted(&p::IDEMPOTENT_METHODS),
        numbers(&p::DEFAULT_RETRY_ON),
        numbers(&p::SERVER_WAIT_STATUSES),
        numbers(&p::THROTTLE_STATUSES),
        p::DEFAULT_THROTTLE_BASE_FACTOR,
        p::SHOULD_RETRY_HEADER,
        p::DEFAULT_MAX_ATTEMPTS,
        p::DEFAULT_MAX_RETRY_AFTER_MS,
        quoted(&ends),
        l::BETA,
        l::OK_GAIN,
        l::MIN_RATE,
        l::BURST
    )
}

/// The demo page's pickers (www/state.js fills them): the presets, the
/// strategies and the jitters that are plain strings. A module of its own:
/// the page is served without js/.
fn render_www() -> String {
    let mut js = String::from(
        "// Generated from src/schema.rs by `cargo run -p xtask`: do not edit (scripts/build.sh regenerates it).\n\n",
    );
    for (name, items) in [
        ("PRESETS", schema::PRESETS),
        ("STRATEGIES", schema::STRATEGIES),
        ("JITTER_KINDS", &schema::JITTERS[..schema::JITTER_RATIO]),
    ] {
        writeln!(js, "export const {name} = {};", list(items)).unwrap();
    }
    js
}

/// `MaxAttempts` / `inFlight` → `MAX_ATTEMPTS` / `IN_FLIGHT`.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_uppercase());
    }
    out
}

/// Writes `text` to `path` unless it holds it already (an unchanged output
/// keeps its timestamp: no needless rebuilds downstream).
fn write(path: &std::path::Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create the output folder");
    }
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write a generated module");
    }
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "js/gen/boundary.js".into());
    let out = std::path::Path::new(&out);
    write(out, &render());
    write(&out.with_file_name("policy.js"), &render_network());
    write(std::path::Path::new("www/gen/lists.js"), &render_www());
}
