//! The retry policy's vectors, shared with the JavaScript package
//! (`verdict` and `timing` in js/policy.js, checked by
//! tests/fetch/policy.test.mjs against the same file): the core's rules must
//! answer each row as written.

use crate::json;

use json::Json;
use wasm_backoff_core::policy::{
    Choice, DEFAULT_RETRY_ON, End, Facts, Request, Wait, advice, honoured, idempotent, throttled,
    timing, verdict, wait, wants_key,
};

const VECTORS: &str = include_str!("policy_vectors.json");

/// A number of the file ("Infinity" stands for the number).
fn num(v: &Json) -> f64 {
    match v {
        Json::Str(_) if v.str() == "Infinity" => f64::INFINITY,
        _ => v.num(),
    }
}

fn name(why: Option<End>) -> &'static str {
    why.map_or("", End::name)
}

#[test]
fn verdict_answers_every_row() {
    let top = json::parse(VECTORS);
    for row in top.get("verdict").arr() {
        let f = row.get("facts");
        let flag = |k: &str, d: bool| f.field(k).map_or(d, Json::boolean);
        let status = f.field("status").map(|s| s.num() as u16);
        let retry_on: Vec<u16> = f.field("retryOn").map_or(DEFAULT_RETRY_ON.to_vec(), |l| {
            l.arr().iter().map(|s| s.num() as u16).collect()
        });
        let facts = Facts {
            failed: flag("failed", false),
            network: flag("network", false),
            status,
            hint_ms: f.field("hintMs").map(num),
            in_retry_on: status.is_some_and(|s| retry_on.contains(&s)),
            idempotent: flag("idempotent", true),
            replayable: flag("replayable", true),
            wants: f.field("wants").map(Json::boolean),
            advice: f.field("advice").map(Json::boolean),
        };
        assert_eq!(name(verdict(&facts)), row.get("want").str(), "{facts:?}");
    }
}

#[test]
fn timing_answers_every_row() {
    let top = json::parse(VECTORS);
    for row in top.get("timing").arr() {
        let f = row.get("facts");
        let n = |k: &str, d: f64| f.field(k).map_or(d, num);
        let delay = n("delayMs", 100.0);
        let w = Wait {
            delay_ms: (delay >= 0.0).then_some(delay),
            hint_ms: f.field("hintMs").map(num),
            max_retry_after_ms: n("maxRetryAfterMs", 1000.0),
            elapsed_ms: n("elapsedMs", 0.0),
            max_elapsed_ms: n("maxElapsedMs", f64::INFINITY),
        };
        assert_eq!(name(timing(&w)), row.get("want").str(), "{w:?}");
    }
}

#[test]
fn delay_rules_answer_every_row() {
    let top = json::parse(VECTORS);
    for row in top.get("delay").arr() {
        let f = row.get("facts");
        let n = |k: &str, d: f64| f.field(k).map_or(d, num);
        let delay = n("delayMs", 100.0);
        let max = n("maxRetryAfterMs", 1000.0);
        let clamp = f.field("clamp").is_some_and(Json::boolean);
        let w = Wait {
            delay_ms: (delay >= 0.0).then_some(delay),
            hint_ms: honoured(f.field("hintMs").map(num), max, clamp),
            max_retry_after_ms: max,
            elapsed_ms: n("elapsedMs", 0.0),
            max_elapsed_ms: n("maxElapsedMs", f64::INFINITY),
        };
        let choice = match f.field("choice") {
            None => Choice::Keep,
            Some(Json::Bool(false)) => Choice::GiveUp,
            Some(v) => Choice::Wait(num(v)),
        };
        let asked = std::cell::Cell::new(false);
        let got = wait(&w, |_| {
            asked.set(true);
            choice
        });
        let want = row.get("want");
        match (got, want) {
            (Ok(ms), Json::Obj(_)) => assert_eq!(ms, want.get("waitMs").num(), "{w:?} {choice:?}"),
            (Err(end), Json::Str(_)) => assert_eq!(end.name(), want.str(), "{w:?} {choice:?}"),
            (got, _) => panic!("{w:?} {choice:?}: got {got:?}, want {want:?}"),
        }
        // The hook is asked only when its answer can matter.
        let matters = w.delay_ms.is_some() && !w.hint_ms.is_some_and(|h| h > max);
        assert_eq!(asked.get(), matters, "{w:?}");
    }
}

#[test]
fn idempotency_answers_every_row() {
    let top = json::parse(VECTORS);
    let rows = top.get("idempotency").arr();
    assert_eq!(rows.len(), 16, "every combination");
    for row in rows {
        let q = row.get("request");
        let r = Request {
            listed: q.get("listed").boolean(),
            keyed: q.get("keyed").boolean(),
            option: q.get("option").boolean(),
            any: q.get("any").boolean(),
        };
        assert_eq!(wants_key(r), row.get("key").boolean(), "{r:?}");
        assert_eq!(idempotent(r), row.get("idempotent").boolean(), "{r:?}");
    }
}

#[test]
fn throttled_and_advice_answer_every_row() {
    let top = json::parse(VECTORS);
    for row in top.get("throttled").arr() {
        let [status, want] = row.arr() else {
            panic!("{row:?}")
        };
        let status = match status {
            Json::Null => None,
            s => Some(s.num() as u16),
        };
        assert_eq!(throttled(status), want.boolean(), "{status:?}");
    }
    for row in top.get("advice").arr() {
        let [value, want] = row.arr() else {
            panic!("{row:?}")
        };
        let value = match value {
            Json::Null => None,
            v => Some(v.str().to_string()),
        };
        let want = match want {
            Json::Null => None,
            w => Some(w.boolean()),
        };
        assert_eq!(advice(value.as_deref()), want, "{value:?}");
    }
}

#[test]
fn every_reason_has_its_wire_place() {
    for (i, e) in End::ALL.iter().enumerate() {
        assert_eq!(*e as usize, i);
    }
}
