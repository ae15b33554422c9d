//! The cases of `fetch_with_backoff` against the repository's scripted HTTP
//! server (tests/server/scripted.mjs), shared by the Node run (`node.rs`)
//! and the headless-Chromium run (`browser.rs`). The server's URL is
//! `process.env.SCRIPTED_URL` in Node, and the `SCRIPTED_URL` the test was
//! compiled with in a browser (which has no environment).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{JSON, Promise, Reflect};
use wasm_backoff_core::{Config, Jitter, Strategy};
use wasm_backoff_web::{Choice, DelayInfo, FetchError, Options, RetryInfo, fetch_with_backoff};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;
use web_sys::{AbortController, Request, RequestInit, Response};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = fetch)]
    fn fetch_with_request(input: &Request) -> Promise;
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, timeout: f64) -> JsValue;
}

/// The scripted server's base URL: `process.env.SCRIPTED_URL` in Node, else
/// (in a browser) `SCRIPTED_URL` at compile time.
fn base() -> String {
    Reflect::get(&js_sys::global(), &"process".into())
        .and_then(|p| Reflect::get(&p, &"env".into()))
        .and_then(|env| Reflect::get(&env, &"SCRIPTED_URL".into()))
        .ok()
        .and_then(|v| v.as_string())
        .or_else(|| option_env!("SCRIPTED_URL").map(String::from))
        .expect("SCRIPTED_URL: start `node tests/server/scripted.mjs` and export the url it prints")
}

/// Whether these tests run in Node (else in a browser).
fn in_node() -> bool {
    Reflect::get(&js_sys::global(), &"process".into()).is_ok_and(|p| p.is_object())
}

/// A path of its own for each test, so that counts never mix.
fn path(name: &str) -> String {
    format!("/web-{name}-{}", js_sys::Date::now())
}

async fn send(req: &Request) -> Response {
    JsFuture::from(fetch_with_request(req))
        .await
        .expect("control request")
        .unchecked_into()
}

async fn script(path: &str, steps: &str) {
    let body = format!(
        r#"{{"path":{},"steps":{steps}}}"#,
        JSON::stringify(&path.into()).unwrap()
    );
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&body.into());
    let req =
        Request::new_with_str_and_init(&format!("{}/__control/script", base()), &init).unwrap();
    let res = send(&req).await;
    assert!(res.ok(), "scripting {path}: status {}", res.status());
}

async fn count(path: &str) -> u32 {
    let url = format!(
        "{}/__control/count?path={}",
        base(),
        js_sys::encode_uri_component(path)
    );
    let res = send(&Request::new_with_str(&url).unwrap()).await;
    let n = JsFuture::from(res.json().unwrap()).await.unwrap();
    n.as_f64().expect("a count") as u32
}

/// Aborts `ctrl` with `reason` once the server has counted a request on
/// `path`: an abort during an attempt that a loaded machine cannot move
/// before the request is sent (as a fixed 50 ms could).
fn abort_once_sent(ctrl: &AbortController, path: &str, reason: JsValue) {
    let (c, p) = (ctrl.clone(), path.to_owned());
    wasm_bindgen_futures::spawn_local(async move {
        while count(&p).await == 0 {
            wait(10.0).await;
        }
        c.abort_with_reason(&reason);
    });
}

async fn text(res: &Response) -> String {
    JsFuture::from(res.text().unwrap())
        .await
        .unwrap()
        .as_string()
        .unwrap()
}

fn get(path: &str) -> Request {
    Request::new_with_str(&format!("{}{path}", base())).unwrap()
}

fn post(path: &str, body: &str, headers: &[(&str, &str)]) -> Request {
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&body.into());
    let h = web_sys::Headers::new().unwrap();
    for (k, v) in headers {
        h.set(k, v).unwrap();
    }
    init.set_headers(&h);
    Request::new_with_str_and_init(&format!("{}{path}", base()), &init).unwrap()
}

/// The fast schedule: 1 ms, 2 ms, 4 ms…, no jitter, five tries.
fn fast() -> Options {
    Options::new()
        .config(
            Config::new()
                .base_ms(1.0)
                .jitter(Jitter::None)
                .max_attempts(Some(5)),
        )
        .seed(1)
}

/// Options that record what on_retry saw.
fn recording(options: Options) -> (Options, Rc<RefCell<Vec<RetryInfo>>>) {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    (
        options.on_retry(move |info| s.borrow_mut().push(info.clone())),
        seen,
    )
}

/// Node's pending timers (`process.getActiveResourcesInfo()` entries named
/// `Timeout`): what a sleep must not leave behind. `None` in a browser, which
/// does not list them.
fn pending_timers() -> Option<usize> {
    if !in_node() {
        return None;
    }
    let process = Reflect::get(&js_sys::global(), &"process".into()).unwrap();
    let info: js_sys::Function = Reflect::get(&process, &"getActiveResourcesInfo".into())
        .unwrap()
        .unchecked_into();
    let list: js_sys::Array = info.call0(&process).unwrap().unchecked_into();
    Some(
        list.iter()
            .filter(|v| v.as_string().as_deref() == Some("Timeout"))
            .count(),
    )
}

async fn wait(ms: f64) {
    JsFuture::from(Promise::new(&mut |resolve, _| {
        set_timeout(&resolve, ms);
    }))
    .await
    .unwrap();
}

#[wasm_bindgen_test]
async fn retries_503s_until_200() {
    let p = path("flaky");
    script(
        &p,
        r#"[{"status":503},{"status":503},{"status":200,"body":"ok"}]"#,
    )
    .await;
    let (options, seen) = recording(fast());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(text(&res).await, "ok");
    assert_eq!(count(&p).await, 3);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 2);
    // (a 503 waits on the throttling base: 10 × base_ms, then doubled)
    assert_eq!(
        (seen[0].attempt, seen[0].status, seen[0].delay_ms),
        (1, Some(503), 10.0)
    );
    assert_eq!(
        (seen[1].attempt, seen[1].status, seen[1].delay_ms),
        (2, Some(503), 20.0)
    );
    assert!(seen[0].error.is_none() && seen[0].retry_after_ms.is_none());
    // on_retry is told the failed response itself.
    assert_eq!(seen[0].response.as_ref().map(Response::status), Some(503));
}

#[wasm_bindgen_test]
async fn exhausted_returns_the_last_response() {
    let p = path("down");
    script(&p, r#"[{"status":502},{"status":503,"body":"last"}]"#).await;
    let options = Options::new().config(
        Config::new()
            .base_ms(1.0)
            .jitter(Jitter::None)
            .max_attempts(Some(3)),
    );
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(text(&res).await, "last");
    assert_eq!(count(&p).await, 3);
}

#[wasm_bindgen_test]
async fn a_status_not_in_retry_on_is_returned_at_once() {
    let p = path("404");
    script(&p, r#"[{"status":404},{"status":200}]"#).await;
    let res = fetch_with_backoff(&get(&p), &fast()).await.unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(count(&p).await, 1);

    // …and retried when listed; 503 then is not.
    let p = path("retry-on");
    script(&p, r#"[{"status":404},{"status":503},{"status":200}]"#).await;
    let res = fetch_with_backoff(&get(&p), &fast().retry_on(&[404]))
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(count(&p).await, 2);
}

#[wasm_bindgen_test]
async fn post_is_retried_only_when_allowed() {
    let p = path("post");
    script(&p, r#"[{"status":503},{"echo":true}]"#).await;
    let res = fetch_with_backoff(&post(&p, "payload", &[]), &fast())
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(count(&p).await, 1);

    // retry_non_idempotent: retried, and the body is sent again.
    let p = path("post-rni");
    script(&p, r#"[{"status":503},{"echo":true}]"#).await;
    let res = fetch_with_backoff(
        &post(&p, "payload", &[]),
        &fast().retry_non_idempotent(true),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 200);
    let echo = JSON::parse(&text(&res).await).unwrap();
    assert_eq!(
        Reflect::get(&echo, &"method".into())
            .unwrap()
            .as_string()
            .unwrap(),
        "POST"
    );
    assert_eq!(
        Reflect::get(&echo, &"body".into())
            .unwrap()
            .as_string()
            .unwrap(),
        "payload"
    );
    assert_eq!(count(&p).await, 2);

    // An Idempotency-Key header makes a POST retryable.
    let p = path("post-key");
    script(&p, r#"[{"status":503},{"echo":true}]"#).await;
    let res = fetch_with_backoff(&post(&p, "again", &[("Idempotency-Key", "k1")]), &fast())
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let echo = JSON::parse(&text(&res).await).unwrap();
    assert_eq!(
        Reflect::get(&echo, &"body".into())
            .unwrap()
            .as_string()
            .unwrap(),
        "again"
    );
    assert_eq!(count(&p).await, 2);
}

#[wasm_bindgen_test]
async fn retry_after_zero_is_honoured_quickly() {
    let p = path("ra0");
    script(
        &p,
        r#"[{"status":429,"headers":{"retry-after":"0"}},{"status":200}]"#,
    )
    .await;
    let (options, seen) = recording(fast());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(count(&p).await, 2);
    let seen = seen.borrow();
    assert_eq!(seen[0].retry_after_ms, Some(0.0));
    assert_eq!(seen[0].delay_ms, 10.0); // the schedule's wait (a 429's: the throttling base), above the hint
}

#[wasm_bindgen_test]
async fn retry_after_lifts_the_wait() {
    // A 30 s Retry-After: on_retry sees a wait of at least 30 s (and at most
    // 30 s + 10 % jitter); the signal then cuts the wait short, so the test
    // does not sleep.
    let p = path("ra30");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after":"30"}},{"status":200}]"#,
    )
    .await;
    let ctrl = AbortController::new().unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let (s, c) = (seen.clone(), ctrl.clone());
    let options = fast().signal(ctrl.signal()).on_retry(move |info| {
        s.borrow_mut().push(info.clone());
        c.abort_with_reason(&"stop".into());
    });
    let start = js_sys::Date::now();
    let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
    let elapsed = js_sys::Date::now() - start;
    assert!(
        matches!(&err, FetchError::Aborted(r) if r.as_string().as_deref() == Some("stop")),
        "{err}"
    );
    assert_eq!(count(&p).await, 1);
    let seen = seen.borrow();
    assert_eq!(seen[0].retry_after_ms, Some(30_000.0));
    assert!(
        (30_000.0..=33_000.0).contains(&seen[0].delay_ms),
        "{}",
        seen[0].delay_ms
    );
    // (bounded by the wait it rules out, not by how fast a loaded machine runs a local request)
    assert!(
        elapsed < seen[0].delay_ms,
        "the abort cut the wait short: {elapsed} ms"
    );
}

#[wasm_bindgen_test]
async fn retry_after_is_actually_waited() {
    // The one real wait: Retry-After: 1 → the retry comes ≥ 1 s later.
    let p = path("ra1");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after":"1"}},{"status":200}]"#,
    )
    .await;
    let start = js_sys::Date::now();
    let res = fetch_with_backoff(&get(&p), &fast()).await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(js_sys::Date::now() - start >= 1000.0);
    assert_eq!(count(&p).await, 2);
}

#[wasm_bindgen_test]
async fn retry_after_above_the_maximum_returns_at_once() {
    let p = path("ra-big");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after":"120"}},{"status":200}]"#,
    )
    .await;
    let start = js_sys::Date::now();
    let res = fetch_with_backoff(&get(&p), &fast()).await.unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(count(&p).await, 1);
    // not the 60 s maximum waited (nor the 120 s named)
    assert!(js_sys::Date::now() - start < 60_000.0);

    // …unless the maximum allows it (then aborted so as not to wait).
    let p = path("ra-big-ok");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after":"120"}},{"status":200}]"#,
    )
    .await;
    let ctrl = AbortController::new().unwrap();
    let c = ctrl.clone();
    let options = fast()
        .max_retry_after_ms(200_000.0)
        .signal(ctrl.signal())
        .on_retry(move |_| c.abort());
    let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
    assert!(matches!(err, FetchError::Aborted(_)));
}

#[wasm_bindgen_test]
async fn invalid_retry_after_is_ignored() {
    let p = path("ra-bad");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after":"soon"}},{"status":200}]"#,
    )
    .await;
    let (options, seen) = recording(fast());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(seen.borrow()[0].retry_after_ms, None);
    assert_eq!(seen.borrow()[0].delay_ms, 10.0); // (a 503's: the throttling base)
}

#[wasm_bindgen_test]
async fn network_errors_are_retried_then_reported() {
    // A browser resends a request by itself when a reused keep-alive
    // connection is reset (Node's undici does not), so there the server may
    // see up to one more request per scripted reset than we made; our own
    // attempts are counted exactly by on_retry.
    let sent = |ours: u32, resets: u32, n: u32| {
        if in_node() {
            n == ours
        } else {
            (ours..=ours + resets).contains(&n)
        }
    };
    let p = path("reset");
    script(
        &p,
        r#"[{"reset":true},{"reset":true},{"status":200,"body":"back"}]"#,
    )
    .await;
    let (options, seen) = recording(fast());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(text(&res).await, "back");
    let retries = seen.borrow().len() as u32;
    if in_node() {
        assert_eq!(retries, 2, "one retry per reset");
    } else {
        assert!(retries <= 2, "{retries} retries");
    }
    assert!(
        seen.borrow()
            .iter()
            .all(|s| s.error.is_some() && s.status.is_none())
    );
    let n = count(&p).await;
    assert!(
        sent(retries + 1, 2, n),
        "{n} requests for {retries} retries"
    );

    let p = path("reset-always");
    script(&p, r#"{"reset":true}"#).await;
    let (options, seen) = recording(
        fast().config(
            Config::new()
                .base_ms(1.0)
                .jitter(Jitter::None)
                .max_attempts(Some(2)),
        ),
    );
    let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
    assert!(matches!(err, FetchError::Network(_)), "{err}");
    assert!(err.to_string().starts_with("network error: "), "{err}");
    assert_eq!(seen.borrow().len(), 1, "two attempts, one retry");
    let n = count(&p).await;
    assert!(sent(2, 2, n), "{n} requests for two attempts");
}

#[wasm_bindgen_test]
async fn an_aborted_signal_rejects_at_once() {
    let p = path("aborted");
    script(&p, r#"{"status":200}"#).await;
    let ctrl = AbortController::new().unwrap();
    ctrl.abort_with_reason(&"gone".into());
    let err = fetch_with_backoff(&get(&p), &fast().signal(ctrl.signal()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, FetchError::Aborted(r) if r.as_string().as_deref() == Some("gone")),
        "{err}"
    );
    assert_eq!(count(&p).await, 0);
}

#[wasm_bindgen_test]
async fn abort_during_an_attempt() {
    let p = path("hang");
    script(&p, r#"{"hang":true}"#).await;
    let ctrl = AbortController::new().unwrap();
    let options = fast().signal(ctrl.signal());
    let req = get(&p);
    let call = fetch_with_backoff(&req, &options);
    abort_once_sent(&ctrl, &p, "late".into());
    let err = call.await.unwrap_err();
    assert!(
        matches!(&err, FetchError::Aborted(r) if r.as_string().as_deref() == Some("late")),
        "{err}"
    );
    assert_eq!(count(&p).await, 1);
}

#[wasm_bindgen_test]
async fn abort_during_a_wait() {
    let p = path("abort-wait");
    script(&p, r#"{"status":503}"#).await;
    let ctrl = AbortController::new().unwrap();
    // A 10 s wait, aborted 50 ms after it began (on_retry comes just
    // before it).
    let c = ctrl.clone();
    let options = Options::new()
        .config(Config::new().base_ms(10_000.0).jitter(Jitter::None))
        .signal(ctrl.signal())
        .on_retry(move |_| {
            let c = c.clone();
            wasm_bindgen_futures::spawn_local(async move {
                wait(50.0).await;
                c.abort();
            });
        });
    let timers = pending_timers();
    let start = js_sys::Date::now();
    let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
    assert!(js_sys::Date::now() - start < 10_000.0, "not the 10 s wait");
    // The 10 s timer was cleared (and the 50 ms one has fired), at once.
    assert_eq!(pending_timers(), timers, "a timer was left behind");
    let FetchError::Aborted(reason) = err else {
        panic!("{err}")
    };
    let name = Reflect::get(&reason, &"name".into()).unwrap().as_string();
    assert_eq!(name.as_deref(), Some("AbortError"));
    assert_eq!(count(&p).await, 1);
}

#[wasm_bindgen_test]
async fn an_invalid_config_is_refused_before_any_attempt() {
    let p = path("bad-config");
    script(&p, r#"{"status":200}"#).await;
    let err = fetch_with_backoff(&get(&p), &Options::new().config(Config::new().factor(0.5)))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::InvalidConfig(_)), "{err}");
    assert_eq!(count(&p).await, 0);
}

#[wasm_bindgen_test]
async fn a_used_request_is_invalid() {
    let p = path("used");
    script(&p, r#"{"status":200}"#).await;
    let req = post(&p, "body", &[]);
    JsFuture::from(req.text().unwrap()).await.unwrap(); // reads the body
    let err = fetch_with_backoff(&req, &fast()).await.unwrap_err();
    assert!(matches!(err, FetchError::InvalidRequest(_)), "{err}");
    assert_eq!(count(&p).await, 0);
}

#[wasm_bindgen_test]
async fn default_options_succeed_at_once() {
    let p = path("ok");
    script(&p, r#"{"status":200,"body":"fine"}"#).await;
    let res = fetch_with_backoff(&get(&p), &Options::default())
        .await
        .unwrap();
    assert_eq!(text(&res).await, "fine");
    assert_eq!(count(&p).await, 1);
}

#[wasm_bindgen_test]
async fn the_default_seed_comes_from_crypto() {
    // entropy_rng's wasm_js backend works in Node (no silent fallback needed).
    assert!(wasm_backoff_core::entropy_rng().is_ok());
    let p = path("entropy");
    script(&p, r#"[{"status":500},{"status":200}]"#).await;
    let (options, seen) =
        recording(Options::new().config(Config::new().base_ms(5.0).max_attempts(Some(2))));
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    let delay = seen.borrow()[0].delay_ms;
    assert!(
        (0.0..=5.0).contains(&delay),
        "full jitter in [0, base]: {delay}"
    );
}

#[wasm_bindgen_test]
async fn a_429_with_only_x_ratelimit_reset_is_waited_for() {
    // GitHub's form: the Unix second the limit resets. The next whole second
    // at least 1 s ahead, so the wait is 1-2 s, less the time the script and
    // the first request take (on a loaded machine, more than 0.3 s could).
    let at = ((js_sys::Date::now() + 1000.0) / 1000.0).ceil();
    let p = path("gh-reset");
    script(
        &p,
        &format!(r#"[{{"status":429,"headers":{{"X-RateLimit-Reset":"{at}"}}}},{{"status":200}}]"#),
    )
    .await;
    let start = js_sys::Date::now();
    let (options, seen) = recording(fast());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    let end = js_sys::Date::now();
    assert_eq!(res.status(), 200);
    assert_eq!(count(&p).await, 2);
    let seen = seen.borrow();
    let named = seen[0].retry_after_ms.expect("a named wait");
    assert!(
        named > 0.0 && named <= at * 1000.0 - start,
        "{named} ms to {at} s"
    );
    assert!(seen[0].delay_ms >= named, "{}", seen[0].delay_ms);
    // The retry was not sent before the reset time (a timer may fire a
    // millisecond early against the wall clock).
    assert!(end >= at * 1000.0 - 2.0, "{} ms early", at * 1000.0 - end);
}

#[wasm_bindgen_test]
async fn retry_after_ms_lifts_the_wait() {
    let p = path("ra-ms");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after-ms":"150"}},{"status":200}]"#,
    )
    .await;
    let (options, seen) = recording(fast());
    let start = js_sys::Date::now();
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(js_sys::Date::now() - start >= 148.0);
    assert_eq!(count(&p).await, 2);
    let seen = seen.borrow();
    assert_eq!(seen[0].retry_after_ms, Some(150.0));
    // at least the named wait, plus at most 10 % of jitter
    assert!(
        (150.0..=165.0).contains(&seen[0].delay_ms),
        "{}",
        seen[0].delay_ms
    );
}

#[wasm_bindgen_test]
async fn named_waits_are_read_in_the_cores_order() {
    // Retry-After before the rate-limit headers; retry-after-ms before
    // Retry-After (the milliseconds win, as the OpenAI and Anthropic SDKs read them).
    for (name, headers, want) in [
        (
            "ra-first",
            r#"{"retry-after":"0","x-ratelimit-reset":"30"}"#,
            0.0,
        ),
        (
            "ms-first",
            r#"{"retry-after":"30","retry-after-ms":"20"}"#,
            20.0,
        ),
    ] {
        let p = path(name);
        let steps = format!(r#"[{{"status":429,"headers":{headers}}},{{"status":200}}]"#);
        script(&p, &steps).await;
        let (options, seen) = recording(fast());
        let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(seen.borrow()[0].retry_after_ms, Some(want), "{name}");
    }
}

#[wasm_bindgen_test]
async fn a_413_is_retried_only_when_the_server_names_a_wait() {
    // 413 is not in the default retry_on: alone, it is returned at once…
    let p = path("413");
    script(&p, r#"[{"status":413},{"status":200}]"#).await;
    let res = fetch_with_backoff(&get(&p), &fast()).await.unwrap();
    assert_eq!(res.status(), 413);
    assert_eq!(count(&p).await, 1);

    // …with a Retry-After, it is retried after it.
    let p = path("413-ra");
    script(
        &p,
        r#"[{"status":413,"headers":{"retry-after":"0"}},{"status":200}]"#,
    )
    .await;
    let (options, seen) = recording(fast());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(count(&p).await, 2);
    assert_eq!(
        (seen.borrow()[0].status, seen.borrow()[0].retry_after_ms),
        (Some(413), Some(0.0))
    );
}

#[wasm_bindgen_test]
async fn a_named_wait_retries_429_and_503_whatever_retry_on_says() {
    let none = || fast().retry_on(&[]);
    for (name, first, retried) in [
        (
            "429-ms",
            r#"{"status":429,"headers":{"retry-after-ms":"20"}}"#,
            true,
        ),
        (
            "503-rl",
            r#"{"status":503,"headers":{"ratelimit":"\"default\";r=0;t=0"}}"#,
            true,
        ),
        ("429-bare", r#"{"status":429}"#, false),
        (
            "503-garbage",
            r#"{"status":503,"headers":{"retry-after":"soon"}}"#,
            false,
        ),
        // Only 413, 429 and 503: another status with a wait is not retried.
        (
            "500-ra",
            r#"{"status":500,"headers":{"retry-after":"0"}}"#,
            false,
        ),
    ] {
        let p = path(name);
        script(&p, &format!(r#"[{first},{{"status":200}}]"#)).await;
        let res = fetch_with_backoff(&get(&p), &none()).await.unwrap();
        let (status, n) = (res.status(), count(&p).await);
        if retried {
            assert_eq!((status, n), (200, 2), "{name}: retried");
        } else {
            assert!(status != 200 && n == 1, "{name}: {status} after {n}");
        }
    }
}

#[wasm_bindgen_test]
async fn a_named_wait_does_not_make_a_post_retryable() {
    let p = path("429-post");
    script(
        &p,
        r#"[{"status":429,"headers":{"retry-after-ms":"10"}},{"echo":true}]"#,
    )
    .await;
    let res = fetch_with_backoff(&post(&p, "once", &[]), &fast())
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(count(&p).await, 1);
}

#[wasm_bindgen_test]
async fn a_rate_limit_reset_beyond_the_maximum_returns_at_once() {
    // An hour ahead, as a Unix time: above the 60 s maximum.
    let at = (js_sys::Date::now() / 1000.0).floor() + 3600.0;
    let p = path("reset-far");
    script(
        &p,
        &format!(r#"[{{"status":429,"headers":{{"x-ratelimit-reset":"{at}"}}}},{{"status":200}}]"#),
    )
    .await;
    let start = js_sys::Date::now();
    let res = fetch_with_backoff(&get(&p), &fast()).await.unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(count(&p).await, 1);
    // not the 60 s maximum waited (nor the hour named)
    assert!(js_sys::Date::now() - start < 60_000.0);
}

/// The `abort` listeners on `signal` (Node's `events.getEventListeners`):
/// what a call must not leave behind. `None` in a browser, which does not
/// list them. (`AbortSignal.any` adds none in Node: it follows its sources
/// internally.)
fn listeners(signal: &web_sys::AbortSignal) -> Option<usize> {
    if !in_node() {
        return None;
    }
    let process = Reflect::get(&js_sys::global(), &"process".into()).unwrap();
    let builtin: js_sys::Function = Reflect::get(&process, &"getBuiltinModule".into())
        .unwrap()
        .unchecked_into();
    let events = builtin.call1(&process, &"node:events".into()).unwrap();
    let get: js_sys::Function = Reflect::get(&events, &"getEventListeners".into())
        .unwrap()
        .unchecked_into();
    let list: js_sys::Array = get
        .call2(&events, signal, &"abort".into())
        .unwrap()
        .unchecked_into();
    Some(list.length() as usize)
}

/// A property of a JavaScript object replaced for the length of a test,
/// put back when dropped (the tests run one at a time).
struct Patched {
    target: JsValue,
    key: &'static str,
    old: JsValue,
}

impl Patched {
    fn new(target: &JsValue, key: &'static str, value: &JsValue) -> Patched {
        let old = Reflect::get(target, &key.into()).unwrap();
        Reflect::set(target, &key.into(), value).unwrap();
        Patched {
            target: target.clone(),
            key,
            old,
        }
    }
}

impl Drop for Patched {
    fn drop(&mut self) {
        Reflect::set(&self.target, &self.key.into(), &self.old).unwrap();
    }
}

/// The error's `name` and `message` (a `DOMException`'s, an `Error`'s).
fn name_and_message(e: &JsValue) -> (String, String) {
    let get = |k: &str| Reflect::get(e, &k.into()).ok().and_then(|v| v.as_string());
    (
        get("name").unwrap_or_default(),
        get("message").unwrap_or_default(),
    )
}

#[wasm_bindgen_test]
async fn a_timed_out_attempt_is_retried() {
    // The first answer would come after 10 s: the 1 s timeout aborts it,
    // the second attempt answers at once (a local request: the 1 s is its
    // room on a loaded machine).
    let p = path("slow-first");
    script(
        &p,
        r#"[{"delayMs":10000,"body":"late"},{"status":200,"body":"second"}]"#,
    )
    .await;
    let ctrl = AbortController::new().unwrap();
    let (options, seen) = recording(fast().timeout_ms(1000.0).signal(ctrl.signal()));
    let (timers, start) = (pending_timers(), js_sys::Date::now());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(text(&res).await, "second");
    assert!(
        js_sys::Date::now() - start < 10_000.0,
        "the slow answer (10 s) was not awaited"
    );
    assert_eq!(count(&p).await, 2);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].status.is_none() && seen[0].response.is_none());
    let (name, message) = name_and_message(seen[0].error.as_ref().unwrap());
    assert_eq!(
        (name.as_str(), message.as_str()),
        ("TimeoutError", "timeout_ms (1000 ms) passed")
    );
    // Both attempts' timers cleared, no listener left on the caller's signal.
    assert_eq!(pending_timers(), timers, "a timer was left behind");
    assert_eq!(
        listeners(&ctrl.signal()).unwrap_or(0),
        0,
        "a listener was left behind"
    );
}

#[wasm_bindgen_test]
async fn the_last_timeout_is_a_timeout_error() {
    let p = path("slow-always");
    script(&p, r#"{"delayMs":10000}"#).await;
    let (options, seen) = recording(
        fast()
            .config(
                Config::new()
                    .base_ms(1.0)
                    .jitter(Jitter::None)
                    .max_attempts(Some(2)),
            )
            .timeout_ms(50.0),
    );
    let (timers, start) = (pending_timers(), js_sys::Date::now());
    let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
    assert!(
        js_sys::Date::now() - start < 10_000.0,
        "no 10 s answer awaited"
    );
    let FetchError::Timeout(e) = &err else {
        panic!("{err}")
    };
    assert_eq!(name_and_message(e).0, "TimeoutError");
    assert!(
        err.to_string().starts_with("timed out: TimeoutError"),
        "{err}"
    );
    assert_eq!(seen.borrow().len(), 1, "two attempts, one retry");
    // (counted by the client: a 50 ms timeout may abort an attempt before a
    // loaded machine has sent it, so the server saw at most the two)
    assert!(count(&p).await <= 2);
    assert_eq!(pending_timers(), timers, "a timer was left behind");

    // A POST is not retried after a timeout either (it may have been processed).
    let p = path("slow-post");
    script(&p, r#"{"delayMs":10000}"#).await;
    let (options, seen) = recording(fast().timeout_ms(50.0));
    let err = fetch_with_backoff(&post(&p, "once", &[]), &options)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Timeout(_)), "{err}");
    assert!(seen.borrow().is_empty(), "not retried");
    assert!(count(&p).await <= 1);
}

#[wasm_bindgen_test]
async fn the_timeout_covers_the_headers_not_the_body() {
    // Headers at once, the second half of the body 1.2 s later: neither
    // the 1 s timeout nor the 1 s deadline cuts the body (their timers end
    // with the attempt and with the call; 1 s: the headers' room on a
    // loaded machine).
    let p = path("slow-body");
    script(
        &p,
        r#"{"status":200,"body":"0123456789","bodyDelayMs":1200}"#,
    )
    .await;
    let res = fetch_with_backoff(&get(&p), &fast().timeout_ms(1000.0).max_elapsed_ms(1000.0))
        .await
        .unwrap();
    assert_eq!(text(&res).await, "0123456789");
    assert_eq!(count(&p).await, 1);
}

#[wasm_bindgen_test]
async fn the_callers_signal_still_reaches_the_body() {
    // With a timeout (so the attempt has a signal of its own), aborting the
    // caller's signal after the headers still stops the body, as with fetch.
    let p = path("abort-body");
    script(
        &p,
        r#"{"status":200,"body":"0123456789","bodyDelayMs":10000}"#,
    )
    .await;
    let ctrl = AbortController::new().unwrap();
    let options = fast().timeout_ms(1000.0).signal(ctrl.signal());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    let start = js_sys::Date::now();
    let body = JsFuture::from(res.text().unwrap());
    ctrl.abort_with_reason(&"enough".into());
    let err = body.await.unwrap_err();
    assert!(
        js_sys::Date::now() - start < 10_000.0,
        "the body (its second half 10 s late) was cut short"
    );
    assert!(!err.is_undefined());
}

#[wasm_bindgen_test]
async fn the_deadline_aborts_the_attempt_in_flight() {
    let p = path("deadline-flight");
    script(&p, r#"[{"status":503},{"status":200,"delayMs":10000}]"#).await;
    let ctrl = AbortController::new().unwrap();
    // (1 s: the first, local attempt's room on a loaded machine)
    let options = fast().max_elapsed_ms(1000.0).signal(ctrl.signal());
    let (timers, start) = (pending_timers(), js_sys::Date::now());
    let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
    let elapsed = js_sys::Date::now() - start;
    assert!(
        (990.0..10_000.0).contains(&elapsed),
        "the call ran {elapsed} ms: not the 10 s answer"
    );
    let FetchError::Deadline(e) = &err else {
        panic!("{err}")
    };
    let (name, message) = name_and_message(e);
    assert_eq!(
        (name.as_str(), message.as_str()),
        ("TimeoutError", "max_elapsed_ms (1000 ms) passed")
    );
    assert_eq!(count(&p).await, 2);
    assert_eq!(pending_timers(), timers, "a timer was left behind");
    assert_eq!(
        listeners(&ctrl.signal()).unwrap_or(0),
        0,
        "a listener was left behind"
    );
}

#[wasm_bindgen_test]
async fn the_deadline_cuts_a_wait_short() {
    // A 10 s wait and a 9 s deadline: the wait is not started (it would
    // end past the deadline), the 503 is returned at once, not a deadline
    // error (what a started wait would meet), before the deadline.
    let p = path("deadline-wait");
    script(&p, r#"{"status":503}"#).await;
    let options = Options::new()
        .config(Config::new().base_ms(10_000.0).jitter(Jitter::None))
        .throttle_base_ms(10_000.0) // (the 503's wait: the schedule's 10 s)
        .max_elapsed_ms(9_000.0);
    let (timers, start) = (pending_timers(), js_sys::Date::now());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 503);
    assert!(js_sys::Date::now() - start < 9_000.0);
    assert_eq!(count(&p).await, 1);
    assert_eq!(
        pending_timers(),
        timers,
        "the deadline's timer was left behind"
    );
}

#[wasm_bindgen_test]
async fn no_wait_starts_that_would_end_past_the_deadline() {
    // Constant 1 s waits, a 1.99 s deadline: the first wait fits (if the
    // first local attempt takes under 0.99 s), the second would end past
    // the deadline (it would begin after 1 s of waiting and an attempt)
    // and is not started, so the second 503 is the answer, not a deadline
    // error (what a started wait would meet), and on_retry was told one
    // wait. (With 300 ms waits and a 500 ms deadline, a loaded machine
    // once took more than the 0.2 s left for the two attempts.)
    let p = path("deadline-waits");
    script(&p, r#"{"status":503,"body":"last"}"#).await;
    let (options, seen) = recording(
        Options::new()
            .config(
                Config::new()
                    .strategy(Strategy::Constant)
                    .base_ms(1000.0)
                    .jitter(Jitter::None)
                    .max_attempts(Some(10)),
            )
            .throttle_base_ms(1000.0) // (the 503's wait: the schedule's 1 s)
            .max_elapsed_ms(1990.0),
    );
    let start = js_sys::Date::now();
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    let elapsed = js_sys::Date::now() - start;
    assert!(
        (998.0..1990.0).contains(&elapsed),
        "one wait (1 s; a timer may fire a ms early), then the answer before the deadline: {elapsed} ms"
    );
    assert_eq!(
        (res.status(), text(&res).await),
        (503, String::from("last"))
    );
    assert_eq!(count(&p).await, 2);
    assert_eq!(seen.borrow().len(), 1, "one wait");
}

#[wasm_bindgen_test]
async fn should_retry_forces_vetoes_or_leaves_it_to_the_rule() {
    // Some(true) forces a retry of a 404 (not in retry_on)…
    let p = path("force-404");
    script(&p, r#"[{"status":404},{"status":200}]"#).await;
    let options = fast().should_retry(|a| (a.status == Some(404)).then_some(true));
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!((res.status(), count(&p).await), (200, 2));

    // …Some(false) vetoes the retry of a 503…
    let p = path("veto-503");
    script(&p, r#"[{"status":503},{"status":200}]"#).await;
    let options = fast().should_retry(|_| Some(false));
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!((res.status(), count(&p).await), (503, 1));

    // …None leaves it to the rule, and the hook sees every attempt.
    let p = path("rule");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after":"0"}},{"status":200}]"#,
    )
    .await;
    let asked = Rc::new(RefCell::new(Vec::new()));
    let a = asked.clone();
    let options = fast().should_retry(move |info| {
        a.borrow_mut().push((
            info.attempt,
            info.status,
            info.retry_after_ms,
            info.response.is_some(),
        ));
        None
    });
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!((res.status(), count(&p).await), (200, 2));
    assert_eq!(
        *asked.borrow(),
        [(1, Some(503), Some(0.0), true), (2, Some(200), None, true)]
    );
}

#[wasm_bindgen_test]
async fn should_retry_may_retry_a_post_or_a_success_within_the_limits() {
    // A POST retried because the hook says so, its body sent again.
    let p = path("force-post");
    script(&p, r#"[{"status":500},{"echo":true}]"#).await;
    let options = fast().should_retry(|a| (a.status == Some(500)).then_some(true));
    let res = fetch_with_backoff(&post(&p, "again", &[]), &options)
        .await
        .unwrap();
    let echo = JSON::parse(&text(&res).await).unwrap();
    let body = Reflect::get(&echo, &"body".into()).unwrap().as_string();
    assert_eq!(body.as_deref(), Some("again"));
    assert_eq!(count(&p).await, 2);

    // A 200 that says it is not ready, by a header the hook reads.
    let p = path("pending");
    script(
        &p,
        r#"[{"status":200,"headers":{"x-state":"pending"}},{"status":200,"body":"done"}]"#,
    )
    .await;
    let options = fast().should_retry(|a| {
        let state = a.response.as_ref()?.headers().get("x-state").ok()??;
        (state == "pending").then_some(true)
    });
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(text(&res).await, "done");
    assert_eq!(count(&p).await, 2);

    // Always Some(true): the schedule's three attempts, then the last response.
    let p = path("force-always");
    script(&p, r#"{"status":200,"body":"same"}"#).await;
    let options = fast()
        .config(
            Config::new()
                .base_ms(1.0)
                .jitter(Jitter::None)
                .max_attempts(Some(3)),
        )
        .should_retry(|_| Some(true));
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(text(&res).await, "same");
    assert_eq!(count(&p).await, 3);
}

#[wasm_bindgen_test]
async fn a_fetch_that_refuses_the_request_is_not_retried() {
    // Browsers word every failure of a built request "Failed to fetch", and
    // Node "fetch failed": a refusal with other words comes from a fetch
    // that an app or a library replaced (a mock, an interceptor) or from a
    // host without one. The global fetch, wrapped: requests carrying
    // `x-refuse` are refused as a browser refuses a bad header, others go
    // through.
    let global = js_sys::global();
    let real: js_sys::Function = Reflect::get(&global, &"fetch".into())
        .unwrap()
        .unchecked_into();
    let calls = Rc::new(std::cell::Cell::new(0));
    let c = calls.clone();
    let wrapper =
        wasm_bindgen::closure::Closure::<dyn FnMut(Request) -> Result<JsValue, JsValue>>::new(
            move |req: Request| {
                c.set(c.get() + 1);
                if req.headers().has("x-refuse").unwrap() {
                    return Err(js_sys::TypeError::new(
                        "Failed to execute 'fetch': Invalid header value",
                    )
                    .into());
                }
                real.call1(&JsValue::UNDEFINED, &req)
            },
        );
    let p = path("refused");
    script(&p, r#"{"status":503}"#).await;
    let refused = || {
        let init = RequestInit::new();
        let h = web_sys::Headers::new().unwrap();
        h.set("x-refuse", "1").unwrap();
        init.set_headers(&h);
        Request::new_with_str_and_init(&format!("{}{p}", base()), &init).unwrap()
    };
    let (options, seen) = recording(fast());
    let err = {
        let _fetch = Patched::new(&global, "fetch", wrapper.as_ref());
        fetch_with_backoff(&refused(), &options).await.unwrap_err()
    };
    let FetchError::InvalidRequest(e) = &err else {
        panic!("{err}")
    };
    assert_eq!(name_and_message(e).0, "TypeError");
    assert_eq!(calls.get(), 1, "tried once");
    assert!(seen.borrow().is_empty());

    // The same wrapper lets a 503 through: retried, so it was the refusal.
    calls.set(0);
    let res = {
        let _fetch = Patched::new(&global, "fetch", wrapper.as_ref());
        fetch_with_backoff(&get(&p), &fast()).await.unwrap()
    };
    assert_eq!((res.status(), calls.get()), (503, 5));
    assert_eq!(
        count(&p).await,
        5,
        "only the requests let through were sent"
    );

    // should_retry may still retry such an error: three tries, then it.
    calls.set(0);
    let options = fast()
        .config(
            Config::new()
                .base_ms(1.0)
                .jitter(Jitter::None)
                .max_attempts(Some(3)),
        )
        .should_retry(|a| a.error.is_some().then_some(true));
    let err = {
        let _fetch = Patched::new(&global, "fetch", wrapper.as_ref());
        fetch_with_backoff(&refused(), &options).await.unwrap_err()
    };
    assert!(matches!(err, FetchError::InvalidRequest(_)), "{err}");
    assert_eq!(calls.get(), 3);

    // No fetch at all (`fetch(…)` throws "fetch is not a function"): at once.
    let (options, seen) = recording(fast());
    let err = {
        let _fetch = Patched::new(&global, "fetch", &JsValue::UNDEFINED);
        fetch_with_backoff(&get(&p), &options).await.unwrap_err()
    };
    assert!(matches!(err, FetchError::InvalidRequest(_)), "{err}");
    assert!(seen.borrow().is_empty());
    assert_eq!(count(&p).await, 5);
}

#[wasm_bindgen_test]
async fn without_abort_signal_any_the_signals_still_work() {
    // Hosts before AbortSignal.any (Safari < 17.4): the attempt's own
    // signal, the caller's forwarded to it while the attempt lasts.
    let abort_signal = Reflect::get(&js_sys::global(), &"AbortSignal".into()).unwrap();
    let _any = Patched::new(&abort_signal, "any", &JsValue::UNDEFINED);

    let p = path("no-any-timeout");
    script(&p, r#"[{"delayMs":10000},{"status":200,"body":"second"}]"#).await;
    let ctrl = AbortController::new().unwrap();
    let timers = pending_timers();
    let options = fast().timeout_ms(1000.0).signal(ctrl.signal());
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(text(&res).await, "second");
    assert_eq!(count(&p).await, 2);
    assert_eq!(pending_timers(), timers, "a timer was left behind");
    assert_eq!(
        listeners(&ctrl.signal()).unwrap_or(0),
        0,
        "a listener was left behind"
    );

    let p = path("no-any-abort");
    script(&p, r#"{"hang":true}"#).await;
    let ctrl = AbortController::new().unwrap();
    let options = fast().timeout_ms(5000.0).signal(ctrl.signal());
    abort_once_sent(&ctrl, &p, "late".into());
    let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
    assert!(
        matches!(&err, FetchError::Aborted(r) if r.as_string().as_deref() == Some("late")),
        "{err}"
    );
    assert_eq!(count(&p).await, 1);
    assert_eq!(
        listeners(&ctrl.signal()).unwrap_or(0),
        0,
        "a listener was left behind"
    );
}

#[wasm_bindgen_test]
async fn invalid_durations_are_refused_before_any_attempt() {
    let p = path("bad-durations");
    script(&p, r#"{"status":200}"#).await;
    for (options, message) in [
        (fast().timeout_ms(0.0), "timeout_ms must be a number > 0"),
        (
            fast().timeout_ms(f64::NAN),
            "timeout_ms must be a number > 0",
        ),
        (
            fast().max_elapsed_ms(-1.0),
            "max_elapsed_ms must be a number >= 0",
        ),
        (
            fast().max_retry_after_ms(f64::NAN),
            "max_retry_after_ms must be a number >= 0",
        ),
    ] {
        let err = fetch_with_backoff(&get(&p), &options).await.unwrap_err();
        assert!(
            matches!(err, FetchError::InvalidOption(m) if m == message),
            "{err}"
        );
        assert_eq!(err.to_string(), format!("invalid option: {message}"));
    }
    assert_eq!(count(&p).await, 0);
    // Infinite durations mean none.
    let options = fast()
        .timeout_ms(f64::INFINITY)
        .max_elapsed_ms(f64::INFINITY)
        .max_retry_after_ms(f64::INFINITY);
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!((res.status(), count(&p).await), (200, 1));
}

#[wasm_bindgen_test]
fn any_reason_can_be_displayed() {
    let object: js_sys::Object = js_sys::Object::create(JsValue::NULL.unchecked_ref()); // no toString: String() throws
    for (reason, text) in [
        (JsValue::from(42), "aborted: 42"),
        (JsValue::from("gone"), "aborted: gone"),
        (js_sys::Error::new("boom").into(), "aborted: Error: boom"),
        (js_sys::Object::new().into(), "aborted: [object Object]"),
        (object.into(), "aborted: ?"),
    ] {
        assert_eq!(FetchError::Aborted(reason).to_string(), text);
    }
}

#[wasm_bindgen_test]
async fn the_delay_hook_chooses_the_wait() {
    // Retry-After: 30 s, and the hook answers 20 ms: told the server's wait
    // and the proposal, and its wait is the one waited.
    let p = path("delay");
    script(
        &p,
        r#"[{"status":503,"headers":{"retry-after":"30"}},{"status":200}]"#,
    )
    .await;
    let asked: Rc<RefCell<Vec<DelayInfo>>> = Rc::default();
    let a = asked.clone();
    let (options, seen) = recording(fast().delay(move |info| {
        a.borrow_mut().push(info.clone());
        Choice::Wait(20.0)
    }));
    let start = js_sys::Date::now();
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        js_sys::Date::now() - start < 30_000.0,
        "not Retry-After's 30 s"
    );
    let asked = asked.borrow();
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0].attempt, asked[0].status), (1, Some(503)));
    assert_eq!(asked[0].retry_after_ms, Some(30_000.0));
    assert!(
        (30_000.0..=31_000.0).contains(&asked[0].delay_ms),
        "{}",
        asked[0].delay_ms
    );
    assert_eq!(
        seen.borrow()[0].delay_ms,
        20.0,
        "on_retry is told the wait chosen"
    );
}

#[wasm_bindgen_test]
async fn a_throttled_answer_waits_on_the_throttling_base() {
    // base 1 ms: a 500 waits 1 ms, a 429 and a 503 (no Retry-After) 10 × 1 ms by default, or throttle_base_ms.
    let p = path("throttle");
    script(
        &p,
        r#"[{"status":500},{"status":429},{"status":503},{"status":200}]"#,
    )
    .await;
    let (options, seen) = recording(
        fast().config(
            Config::new()
                .base_ms(1.0)
                .factor(1.0)
                .jitter(Jitter::None)
                .max_attempts(Some(5)),
        ),
    );
    let res = fetch_with_backoff(&get(&p), &options).await.unwrap();
    assert_eq!(res.status(), 200);
    let waits: Vec<f64> = seen.borrow().iter().map(|i| i.delay_ms).collect();
    assert_eq!(waits, [1.0, 10.0, 10.0]);
    let q = path("throttle-set");
    script(&q, r#"[{"status":429},{"status":200}]"#).await;
    let (options, seen) = recording(fast().throttle_base_ms(40.0));
    fetch_with_backoff(&get(&q), &options).await.unwrap();
    assert_eq!(seen.borrow()[0].delay_ms, 40.0);
    let err = fetch_with_backoff(&get(&q), &fast().throttle_base_ms(f64::INFINITY))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::InvalidOption(m) if m.starts_with("throttle_base_ms")));
}

#[wasm_bindgen_test]
async fn a_server_wait_over_the_maximum_is_clamped_when_asked() {
    // Retry-After: 120 s over a 30 ms maximum: the 429 is returned at once, or (clamped) waited as 30 ms.
    let steps = r#"[{"status":429,"headers":{"retry-after":"120"}},{"status":200}]"#;
    let p = path("over-max");
    script(&p, steps).await;
    let res = fetch_with_backoff(&get(&p), &fast().max_retry_after_ms(30.0))
        .await
        .unwrap();
    assert_eq!((res.status(), count(&p).await), (429, 1));
    let q = path("over-max-clamped");
    script(&q, steps).await;
    let (options, seen) = recording(fast().max_retry_after_ms(30.0).clamp_retry_after(true));
    let res = fetch_with_backoff(&get(&q), &options).await.unwrap();
    assert_eq!((res.status(), count(&q).await), (200, 2));
    let waited = seen.borrow()[0].delay_ms;
    assert!((30.0..=33.0).contains(&waited), "{waited}");
}

#[wasm_bindgen_test]
async fn the_delay_hook_may_give_up_and_may_not_answer_nonsense() {
    let p = path("delay-no");
    script(&p, r#"[{"status":503},{"status":200}]"#).await;
    let res = fetch_with_backoff(&get(&p), &fast().delay(|_| Choice::GiveUp))
        .await
        .unwrap();
    assert_eq!((res.status(), count(&p).await), (503, 1));
    // Not asked when the server's wait is over the maximum.
    let q = path("delay-ra");
    script(
        &q,
        r#"[{"status":429,"headers":{"retry-after":"120"}},{"status":200}]"#,
    )
    .await;
    let asked = Rc::new(RefCell::new(0));
    let a = asked.clone();
    let res = fetch_with_backoff(
        &get(&q),
        &fast().delay(move |_| {
            *a.borrow_mut() += 1;
            Choice::Keep
        }),
    )
    .await
    .unwrap();
    assert_eq!((res.status(), *asked.borrow()), (429, 0));
    let r = path("delay-bad");
    script(&r, r#"[{"status":503},{"status":200}]"#).await;
    let err = fetch_with_backoff(&get(&r), &fast().delay(|_| Choice::Wait(f64::NAN)))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::InvalidOption(m) if m.starts_with("delay")));
    assert_eq!(count(&r).await, 1);
}

#[wasm_bindgen_test]
async fn x_should_retry_is_the_servers_advice() {
    let p = path("advice-yes");
    script(
        &p,
        r#"[{"status":404,"headers":{"x-should-retry":"true"}},{"status":200}]"#,
    )
    .await;
    let res = fetch_with_backoff(&get(&p), &fast()).await.unwrap();
    assert_eq!((res.status(), count(&p).await), (200, 2));
    let q = path("advice-no");
    script(
        &q,
        r#"[{"status":503,"headers":{"x-should-retry":"false"}},{"status":200}]"#,
    )
    .await;
    let res = fetch_with_backoff(&get(&q), &fast()).await.unwrap();
    assert_eq!((res.status(), count(&q).await), (503, 1));
}

/// The body's bytes, or the name of the error that ended it (read with a
/// reader: Chromium's `arrayBuffer()` words any stream error as a `TypeError`).
async fn body_bytes(res: &Response) -> Result<usize, String> {
    let reader: web_sys::ReadableStreamDefaultReader =
        res.body().unwrap().get_reader().unchecked_into();
    let mut n = 0;
    loop {
        let r = JsFuture::from(reader.read()).await.map_err(|e| {
            Reflect::get(&e, &"name".into())
                .ok()
                .and_then(|n| n.as_string())
                .unwrap_or_default()
        })?;
        if Reflect::get(&r, &"done".into()).unwrap().is_truthy() {
            return Ok(n);
        }
        let chunk: js_sys::Uint8Array = Reflect::get(&r, &"value".into()).unwrap().unchecked_into();
        n += chunk.length() as usize;
    }
}

#[wasm_bindgen_test]
async fn idle_timeout_ends_a_body_that_stalls() {
    let p = path("idle-stall");
    script(
        &p,
        r#"{"size":100000,"stallAfter":1000,"headers":{"x-kept":"yes"}}"#,
    )
    .await;
    let before = pending_timers();
    let res = fetch_with_backoff(&get(&p), &Options::new().idle_timeout_ms(100.0))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers().get("x-kept").unwrap().as_deref(), Some("yes"));
    assert!(res.url().ends_with(&p), "url {}", res.url());
    assert_eq!(body_bytes(&res).await, Err("TimeoutError".to_string()));
    assert_eq!(pending_timers(), before, "a timer was left behind");
}

#[wasm_bindgen_test]
async fn idle_timeout_lets_a_steady_body_through() {
    let p = path("idle-steady");
    script(&p, r#"{"size":300000}"#).await;
    let before = pending_timers();
    // (2 s: a steady body never pauses that long, even on a loaded machine)
    let res = fetch_with_backoff(&get(&p), &Options::new().idle_timeout_ms(2000.0))
        .await
        .unwrap();
    assert_eq!(body_bytes(&res).await, Ok(300_000));
    assert_eq!(pending_timers(), before, "a timer was left behind");
}

#[wasm_bindgen_test]
async fn idle_timeout_must_be_positive() {
    let p = path("idle-bad");
    script(&p, r#"{"status":200}"#).await;
    for ms in [0.0, -1.0, f64::NAN] {
        let err = fetch_with_backoff(&get(&p), &Options::new().idle_timeout_ms(ms))
            .await
            .unwrap_err();
        assert!(
            matches!(err, FetchError::InvalidOption(m) if m.starts_with("idle_timeout_ms")),
            "{ms}"
        );
    }
    assert_eq!(count(&p).await, 0);
}
