//! The one description of the JS/wasm boundary.
//!
//! Everything both sides must agree on is written here once: the fields of
//! the options record (their order is their offset), the order of every
//! enumeration that crosses as a number, the error codes (one number space)
//! with their messages, and the limits. `cargo run -p xtask` renders it as
//! `js/gen/boundary.js` (scripts/build.sh does that before bundling), so
//! the JavaScript side never copies a number or a message by hand.
//!
//! Only numbers cross at run time: the messages and names below are read by
//! the generator, natively, and never reach the wasm module (nothing on the
//! wasm path refers to them, so the linker drops them).

use wasm_backoff_core::{ConfigError, Preset, Strategy};

/// A field of the options record: one f64 at offset `Field as usize`, NaN
/// meaning "not given". The record is shared by every constructor: a
/// `Backoff` reads the schedule fields, a gate those and its own, a task
/// queue those and its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Field {
    /// Index into [`PRESETS`].
    Preset,
    /// Index into [`STRATEGIES`].
    Strategy,
    /// `baseMs`.
    BaseMs,
    /// `factor`.
    Factor,
    /// `maxDelayMs`.
    MaxDelayMs,
    /// Index into [`JITTERS`] (the JS reader maps `{ ratio }` and `{ addMaxMs }` to 3 and 4).
    Jitter,
    /// `jitter.ratio` or `jitter.addMaxMs`.
    JitterAmount,
    /// `maxAttempts`; +Infinity = no limit.
    MaxAttempts,
    /// `maxElapsedMs` (of the schedule: a sum of delays); +Infinity = none.
    MaxElapsedMs,
    /// `ceiling`.
    Ceiling,
    /// Index into [`AT_CEILING`].
    AtCeiling,
    /// Index into [`SLOT_MODES`].
    SlotMode,
    /// `seed`, a safe integer (the JS side draws one when none is given).
    Seed,
    /// Not an option: the caller's attempt limit when neither `maxAttempts`
    /// nor the preset sets one (fetchWithBackoff: 5).
    FallbackAttempts,
    /// Gate: `maxQueued`.
    MaxQueued,
    /// Gate: index into [`OVERFLOWS`].
    Overflow,
    /// Gate: `concurrency`.
    Concurrency,
    /// Gate: `probeTimeoutMs`.
    ProbeTimeoutMs,
    /// Gate: `consecutive` (failures in a row that trip a healthy target).
    Consecutive,
    /// Gate: `failureRatio` (the failed share of the window that trips).
    FailureRatio,
    /// Gate: `windowMs` (the window of `failureRatio`).
    WindowMs,
    /// Gate: `minCalls` (calls in the window before `failureRatio` applies).
    MinCalls,
    /// Gate: index into [`MODES`].
    Mode,
    /// Gate: index into [`LIMIT_KINDS`].
    Limit,
    /// Queue: `leaseMs`.
    LeaseMs,
    /// Queue: `maxFailures`.
    MaxFailures,
}

/// Length of the options record.
pub const RECORD_LEN: usize = Field::MaxFailures as usize + 1;

/// How the JS side reads a field from an options object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A number (TypeError otherwise; the range is checked in wasm).
    Number,
    /// A string out of the list (RangeError for another string, TypeError
    /// for anything else); it crosses as its index.
    Choice(&'static [&'static str]),
    /// Read by hand in JS (jitter's two shapes, the seed's entropy) or not
    /// an option at all.
    Special,
}

/// Each field: its JS option name, how JS reads it, and the error whose
/// message a wrong type throws.
pub const FIELDS: [(Field, &str, Kind, Error); RECORD_LEN] = [
    (Field::Preset, "preset", Kind::Choice(PRESETS), Error::None),
    (
        Field::Strategy,
        "strategy",
        Kind::Choice(STRATEGIES),
        Error::None,
    ),
    (Field::BaseMs, "baseMs", Kind::Number, Error::BaseMs),
    (Field::Factor, "factor", Kind::Number, Error::Factor),
    (
        Field::MaxDelayMs,
        "maxDelayMs",
        Kind::Number,
        Error::MaxDelayMs,
    ),
    (Field::Jitter, "jitter", Kind::Special, Error::Jitter),
    (Field::JitterAmount, "", Kind::Special, Error::None),
    (
        Field::MaxAttempts,
        "maxAttempts",
        Kind::Number,
        Error::MaxAttempts,
    ),
    (
        Field::MaxElapsedMs,
        "maxElapsedMs",
        Kind::Number,
        Error::MaxElapsedMs,
    ),
    (Field::Ceiling, "ceiling", Kind::Number, Error::Ceiling),
    (
        Field::AtCeiling,
        "atCeiling",
        Kind::Choice(AT_CEILING),
        Error::None,
    ),
    (
        Field::SlotMode,
        "slotMode",
        Kind::Choice(SLOT_MODES),
        Error::None,
    ),
    (Field::Seed, "seed", Kind::Special, Error::Seed),
    (Field::FallbackAttempts, "", Kind::Special, Error::None),
    (
        Field::MaxQueued,
        "maxQueued",
        Kind::Number,
        Error::MaxQueued,
    ),
    (
        Field::Overflow,
        "overflow",
        Kind::Choice(OVERFLOWS),
        Error::None,
    ),
    (
        Field::Concurrency,
        "concurrency",
        Kind::Number,
        Error::Concurrency,
    ),
    (
        Field::ProbeTimeoutMs,
        "probeTimeoutMs",
        Kind::Number,
        Error::ProbeTimeoutMs,
    ),
    (
        Field::Consecutive,
        "consecutive",
        Kind::Number,
        Error::Consecutive,
    ),
    (
        Field::FailureRatio,
        "failureRatio",
        Kind::Number,
        Error::FailureRatio,
    ),
    (Field::WindowMs, "windowMs", Kind::Number, Error::WindowMs),
    (Field::MinCalls, "minCalls", Kind::Number, Error::MinCalls),
    (Field::Mode, "mode", Kind::Choice(MODES), Error::None),
    (
        Field::Limit,
        "limit",
        Kind::Choice(LIMIT_KINDS),
        Error::None,
    ),
    (Field::LeaseMs, "leaseMs", Kind::Number, Error::LeaseMs),
    (
        Field::MaxFailures,
        "maxFailures",
        Kind::Number,
        Error::MaxFailures,
    ),
];

/// The record's sections: which fields each constructor reads (`[from, to)`).
pub const SECTIONS: [(&str, Field, usize); 3] = [
    ("schedule", Field::Preset, Field::MaxQueued as usize),
    ("gate", Field::MaxQueued, Field::LeaseMs as usize),
    ("queue", Field::LeaseMs, RECORD_LEN),
];

/// `preset` values, in [`Preset::ALL`] order (the core's list: a preset
/// is added there only).
pub const PRESETS: &[&str] = &{
    let mut names = [""; Preset::ALL.len()];
    let mut i = 0;
    while i < Preset::ALL.len() {
        names[i] = Preset::ALL[i].name();
        i += 1;
    }
    names
};
/// `strategy` values, in [`Strategy::ALL`] order (the core's list, which
/// `crate::calc` decodes by the same index).
pub const STRATEGIES: &[&str] = &{
    let mut names = [""; Strategy::ALL.len()];
    let mut i = 0;
    while i < Strategy::ALL.len() {
        names[i] = Strategy::ALL[i].name();
        i += 1;
    }
    names
};
/// `jitter` values: the three strings, then the two object shapes.
pub const JITTERS: &[&str] = &["none", "full", "equal", "ratio", "addMaxMs"];
/// `atCeiling` values.
pub const AT_CEILING: &[&str] = &["stay", "reset"];
/// `slotMode` values.
pub const SLOT_MODES: &[&str] = &["binary", "exponent"];
/// Gate `overflow` values.
pub const OVERFLOWS: &[&str] = &["evict-oldest", "reject-newest"];
/// Gate phases, in `gate::Phase` declaration order (as `GATE_STATUS` reports them).
pub const PHASES: &[&str] = &["closed", "open", "half-open", "probing", "isolated"];
/// The circuit's state for each phase of [`PHASES`]: the one vocabulary of
/// `state()`, `onStateChange` and `toJSON()` (a probing target is half-open,
/// with `probing: true`).
pub const CIRCUIT: &[&str] = &["closed", "open", "half-open", "half-open", "isolated"];
/// Why the phase last changed, in `gate::Cause` declaration order.
pub const CAUSES: &[&str] = &[
    "none",
    "tripped",
    "round-over",
    "probe-failed",
    "probe-timeout",
    "probe-succeeded",
    "isolated",
    "released",
    "restored",
];
/// A saved target's `state`, by the number the core saves (`gate::SAVED_PHASE`).
pub const SAVED_STATES: &[&str] = &["closed", "open", "isolated"];
/// Gate `mode` values: hold calls while the circuit is open, or reject them.
pub const MODES: &[&str] = &["hold", "fail-fast"];
/// Gate `limit` values.
pub const LIMIT_KINDS: &[&str] = &["none", "adaptive"];
/// The names of a saved target's numbers, by offset (`gate::SAVED_*`; the
/// window's buckets are the last `2 * BUCKETS`, read as two arrays).
pub const SAVED: [&str; 8] = [
    "savedAt",
    "state",
    "untilMs",
    "round",
    "lastDelayMs",
    "chainMs",
    "failures",
    "windowAt",
];
/// Task states, in `queue::TaskState` discriminant order.
pub const TASK_STATES: &[&str] = &["pending", "processing", "processed", "error"];

/// Every error the boundary reports, in one number space: a constructor
/// returns `-code`, and the JS side throws `RangeError(MESSAGES[code])`
/// (or `TypeError` with the same text for a value of the wrong type). The
/// small module's errors come first (see [`Error::FIRST_FULL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Error {
    /// Not an error (code 0).
    None,
    /// `baseMs`.
    BaseMs,
    /// `factor`.
    Factor,
    /// `maxDelayMs`.
    MaxDelayMs,
    /// `jitter.ratio`.
    JitterRatio,
    /// `jitter.addMaxMs`.
    JitterAddMaxMs,
    /// `maxAttempts`.
    MaxAttempts,
    /// `maxElapsedMs`.
    MaxElapsedMs,
    /// `ceiling`.
    Ceiling,
    /// The Hadoop preset's rule on `maxAttempts`.
    HadoopMaxAttempts,
    /// `jitter` (a shape that is none of the five; raised in JS).
    Jitter,
    /// `seed`.
    Seed,
    /// The module could not grow its memory for one more object.
    OutOfMemory,
    /// Gate `maxQueued`.
    MaxQueued,
    /// Gate `concurrency`.
    Concurrency,
    /// Gate `probeTimeoutMs`.
    ProbeTimeoutMs,
    /// Gate `consecutive`.
    Consecutive,
    /// Gate `failureRatio`.
    FailureRatio,
    /// Gate `windowMs`.
    WindowMs,
    /// Gate `minCalls`.
    MinCalls,
    /// Queue `leaseMs`.
    LeaseMs,
    /// Queue `maxFailures`.
    MaxFailures,
    /// Queue `maxRetentionMs` (not a field of the record: the queue passes
    /// it to its calls, so that the small module's record does not grow).
    MaxRetentionMs,
}

impl Error {
    /// Every error, in code order.
    pub const ALL: [Error; 23] = [
        Error::None,
        Error::BaseMs,
        Error::Factor,
        Error::MaxDelayMs,
        Error::JitterRatio,
        Error::JitterAddMaxMs,
        Error::MaxAttempts,
        Error::MaxElapsedMs,
        Error::Ceiling,
        Error::HadoopMaxAttempts,
        Error::Jitter,
        Error::Seed,
        Error::OutOfMemory,
        Error::MaxQueued,
        Error::Concurrency,
        Error::ProbeTimeoutMs,
        Error::Consecutive,
        Error::FailureRatio,
        Error::WindowMs,
        Error::MinCalls,
        Error::LeaseMs,
        Error::MaxFailures,
        Error::MaxRetentionMs,
    ];

    /// The first error only the gate and queue modules report: the small module's JS
    /// carries the messages below it only.
    pub const FIRST_FULL: Error = Error::MaxQueued;

    /// The first error only the queue module reports: the gate's JS carries
    /// the messages below it only (`GATE_MESSAGES`).
    pub const FIRST_QUEUE: Error = Error::LeaseMs;

    /// The stable code (the declaration order).
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The error of a rejected schedule option.
    pub const fn from_config(e: ConfigError) -> Error {
        match e {
            ConfigError::BaseMs => Error::BaseMs,
            ConfigError::Factor => Error::Factor,
            ConfigError::MaxDelayMs => Error::MaxDelayMs,
            ConfigError::JitterRatio => Error::JitterRatio,
            ConfigError::JitterAddMaxMs => Error::JitterAddMaxMs,
            ConfigError::MaxAttempts => Error::MaxAttempts,
            ConfigError::MaxElapsedMs => Error::MaxElapsedMs,
            ConfigError::Ceiling => Error::Ceiling,
            ConfigError::HadoopMaxAttempts => Error::HadoopMaxAttempts,
        }
    }

    /// The message JS throws; it starts with the option's name. The
    /// schedule's are the core's own ([`ConfigError::message`]). (Read by
    /// the generator only; nothing on the wasm path calls it.)
    pub fn message(self) -> &'static str {
        if let Some(c) = ConfigError::ALL
            .into_iter()
            .find(|c| Error::from_config(*c) == self)
        {
            return c.message();
        }
        match self {
            Error::None => "",
            Error::Jitter => "jitter must be 'none', 'full', 'equal', { ratio } or { addMaxMs }",
            Error::Seed => "seed must be a safe integer",
            Error::MaxQueued => "maxQueued must be an integer >= 0 or Infinity",
            Error::Concurrency => "concurrency must be an integer >= 1 or Infinity",
            Error::ProbeTimeoutMs => "probeTimeoutMs must be a number > 0",
            Error::Consecutive => {
                "consecutive must be an integer >= 1 or Infinity, and not given with failureRatio"
            }
            Error::FailureRatio => "failureRatio must be a number > 0 and <= 1",
            Error::WindowMs => "windowMs must be a number > 0 and <= 2147483647",
            Error::MinCalls => "minCalls must be an integer >= 1",
            // The core's `QueueError` messages (its queue module is in the
            // queue module only; a test checks they are the same).
            Error::LeaseMs => "leaseMs must be a number > 0 and <= 2147483647",
            Error::MaxFailures => "maxFailures must be an integer >= 1 or Infinity",
            Error::MaxRetentionMs => "maxRetentionMs must be a number > 0 or Infinity",
            Error::OutOfMemory => "out of memory: free() objects you no longer use",
            _ => unreachable!("the schedule's errors are the core's, above"),
        }
    }
}

/// What the result record ([`crate::io::out`]) holds after a gate
/// operation, by offset.
pub const GATE_STATUS: [&str; 10] = [
    "phase",
    "held",
    "inFlight",
    "rounds",
    "wake",
    "probes",
    "evictions",
    "timeouts",
    "cause",
    "until",
];

/// What the result record holds after `backoff_counters`, by offset.
/// (`maxAttempts`: the schedule's limit, Infinity for none; the fetch
/// driver's attempt header names it.)
pub const COUNTERS: [&str; 5] = [
    "attempt",
    "totalRetries",
    "resets",
    "elapsedMs",
    "maxAttempts",
];

/// What the result record holds after a queue transition, by offset.
pub const TASK: [&str; 4] = ["state", "failureCount", "nextAttemptAt", "completeBy"];

/// What the result record holds after `stats`, by offset.
pub const STATS: [&str; 6] = ["exact", "min", "max", "p50", "p90", "mean"];

/// Index of `{ ratio }` in [`JITTERS`] (the first of the object shapes: the
/// string kinds are the ones below it).
pub const JITTER_RATIO: usize = 3;
/// Index of `{ addMaxMs }` in [`JITTERS`].
pub const JITTER_ADD_MAX_MS: usize = 4;

/// Answers with a meaning of their own. The convention for the rest: an
/// answer that can be a value (a delay, a tag, a handle, a time) is negative
/// when there is none (a constructor's: minus the error code), and an
/// argument that may be absent is NaN when it is (as in the options record).
pub const CODES: [(&str, f64); 19] = [
    // A gate's wake time when no timer is needed.
    ("WAKE_NONE", -1.0),
    // A gate's wake time when it is idle (nothing held, in flight or to remember).
    ("WAKE_IDLE", -2.0),
    // gate_admit / gate_settle / gate_keep: held.
    ("HELD", -1.0),
    // … held, and the oldest held call (the head) must be evicted.
    ("EVICT_HEAD", -2.0),
    // … held, and the newest held call (the tail) must be refused.
    ("EVICT_TAIL", -3.0),
    // gate_admit / gate_settle / gate_keep: the call ends, for the reason
    // END_REASONS[ENDED - answer] (js/gen/policy.js: the core's policy::End
    // in wire order; `circuit-open` when failing fast).
    ("ENDED", -4.0),
    // gate_settle's outcome: the call reached the target (no failure of it).
    ("REACHED", 0.0),
    // … it failed the target.
    ("FAILED", 1.0),
    // … it ended without an outcome (aborted).
    ("CANCELLED", 2.0),
    // … its deadline cut it in flight (a probe's counts as failed).
    ("TIMED_OUT", 3.0),
    // gate_restore: the saved target was refused as malformed (then it is closed).
    ("MALFORMED", 1.0),
    // … as saved in the future (a clock more than gate::CLOCK_SKEW_MS ahead).
    ("FROM_THE_FUTURE", 2.0),
    // gate_settle / gate_keep's `own`: the call's `delay` hook gave up (what
    // Call.next answers then: js/policy.js GAVE_UP; -1, its schedule is exhausted).
    ("OWN_VETOED", -2.0),
    // queue_due: nothing to do now (`queue::Due` order).
    ("DUE_WAIT", 0.0),
    // queue_due: pending and due: claim it.
    ("DUE_CLAIM", 1.0),
    // queue_due: processing past its lease: sweep it.
    ("DUE_SWEEP", 2.0),
    // queue_due: pending past its retention (maxRetentionMs): expire it.
    ("DUE_EXPIRE", 3.0),
    // `jitter` object shapes in the record (see JITTERS).
    ("JITTER_RATIO", JITTER_RATIO as f64),
    ("JITTER_ADD_MAX_MS", JITTER_ADD_MAX_MS as f64),
];

/// The value of one of [`CODES`] (for the Rust side's own use).
const fn code(i: usize) -> f64 {
    CODES[i].1
}
/// See [`CODES`].
pub const WAKE_NONE: f64 = code(0);
/// See [`CODES`].
pub const WAKE_IDLE: f64 = code(1);
/// See [`CODES`].
pub const HELD: f64 = code(2);
/// See [`CODES`].
pub const EVICT_HEAD: f64 = code(3);
/// See [`CODES`].
pub const EVICT_TAIL: f64 = code(4);
/// See [`CODES`].
pub const ENDED: f64 = code(5);
/// See [`CODES`].
pub const REACHED: f64 = code(6);
/// See [`CODES`].
pub const FAILED: f64 = code(7);
/// See [`CODES`].
pub const CANCELLED: f64 = code(8);
/// See [`CODES`].
pub const TIMED_OUT: f64 = code(9);
/// See [`CODES`].
pub const MALFORMED: f64 = code(10);
/// See [`CODES`].
pub const FROM_THE_FUTURE: f64 = code(11);
/// See [`CODES`].
pub const OWN_VETOED: f64 = code(12);

/// Named numbers both sides use.
pub const LIMITS: [(&str, f64); 8] = [
    // setTimeout fires at once for anything longer: every delay is clamped to it.
    ("MAX_TIMER", wasm_backoff_core::MAX_DELAY_MS),
    ("RECORD_LEN", RECORD_LEN as f64),
    ("OUT_LEN", crate::io::OUT_LEN as f64),
    // Draws per `backoff_draws` call (the scratch buffer's length).
    ("CHUNK", crate::io::CHUNK as f64),
    // The largest retry number a call takes (`attempt: u32` of backoff_draws, stats).
    ("MAX_RETRY", u32::MAX as f64),
    // The largest integer a JS number holds exactly (seeds must be safe integers).
    ("MAX_SAFE", 9_007_199_254_740_991.0),
    // Numbers in a saved target (`gate::SAVED_LEN`), and its window's buckets.
    ("SAVED_LEN", wasm_backoff_core::gate::SAVED_LEN as f64),
    ("BUCKETS", wasm_backoff_core::breaker::BUCKETS as f64),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_agree_with_the_core() {
        use wasm_backoff_core::queue::Due;
        assert_eq!(JITTERS[JITTER_RATIO], "ratio");
        assert_eq!(JITTERS[JITTER_ADD_MAX_MS], "addMaxMs");
        for (name, due) in [
            ("DUE_WAIT", Due::Wait),
            ("DUE_CLAIM", Due::Claim),
            ("DUE_SWEEP", Due::Sweep),
            ("DUE_EXPIRE", Due::Expire),
        ] {
            let v = CODES.iter().find(|c| c.0 == name).unwrap().1;
            assert_eq!(v, due as u8 as f64, "{name}");
        }
        use wasm_backoff_core::gate::{self as g, Cause, Phase};
        assert_eq!(PHASES[Phase::Isolated as usize], "isolated");
        assert_eq!(PHASES.len(), Phase::Isolated as usize + 1);
        assert_eq!(CAUSES[Cause::Restored as usize], "restored");
        assert_eq!(CAUSES.len(), Cause::Restored as usize + 1);
        assert_eq!(CAUSES[Cause::ProbeTimeout as usize], "probe-timeout");
        assert_eq!(CIRCUIT.len(), PHASES.len());
        for (i, name) in SAVED.iter().enumerate() {
            let at = [
                g::SAVED_AT,
                g::SAVED_PHASE,
                g::SAVED_UNTIL,
                g::SAVED_ROUND,
                g::SAVED_PREV,
                g::SAVED_CHAIN,
                g::SAVED_FAILURES,
                g::SAVED_WINDOW_AT,
            ][i];
            assert_eq!(at, i, "{name}");
        }
        assert_eq!(g::SAVED_WINDOW, SAVED.len(), "then the window");
        // An end crosses as ENDED minus its wire order (END_REASONS), below the hold codes.
        use wasm_backoff_core::policy::End;
        for (i, e) in End::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i, "{e:?}");
        }
        assert!(ENDED < HELD.min(EVICT_HEAD).min(EVICT_TAIL));
    }

    #[test]
    fn fields_are_listed_at_their_offsets() {
        for (i, (f, ..)) in FIELDS.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}");
        }
        for (i, e) in Error::ALL.iter().enumerate() {
            assert_eq!(e.code() as usize, i, "{e:?}");
        }
    }

    #[cfg(feature = "queue")]
    #[test]
    fn queue_messages_are_the_cores() {
        use wasm_backoff_core::queue::QueueError;
        assert_eq!(Error::LeaseMs.message(), QueueError::LeaseMs.message());
        assert_eq!(
            Error::MaxFailures.message(),
            QueueError::MaxFailures.message()
        );
        assert_eq!(
            Error::MaxRetentionMs.message(),
            QueueError::MaxRetentionMs.message()
        );
    }

    #[test]
    fn every_message_names_its_option() {
        for (_, key, _, err) in FIELDS {
            if !key.is_empty() && err != Error::None {
                assert!(err.message().starts_with(key), "{key}: {}", err.message());
            }
        }
        for e in Error::ALL.iter().skip(1) {
            assert!(
                e.message().contains(" must be ") || *e == Error::OutOfMemory,
                "{e:?}"
            );
        }
    }
}
