//! A minimal Rust wasm page: fetches a URL with retries
//! ([`wasm_backoff_web::fetch_with_backoff`]) and lists every attempt in the
//! DOM, with the wait before each retry.
//!
//! `bash scripts/example.sh` builds it into `target/example/fetch-page/`
//! (cargo, the pinned wasm-bindgen, wasm-opt); `node scripts/serve.mjs`
//! then serves it at <http://127.0.0.1:8080/target/example/fetch-page/>,
//! where by default it fetches the demo server's flaky endpoint (503, then
//! 429 with `Retry-After: 1`, then 200). `?url=…` fetches another URL.
//!
//! Without the default feature `retries` it does one plain `fetch` instead,
//! the same page otherwise: the baseline of `bash scripts/example.sh --sizes`.
#![forbid(unsafe_code)]

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Document, Element, Request, Response};

/// Runs when the module is instantiated: fetches, and shows what happened.
#[wasm_bindgen(start)]
pub fn start() {
    wasm_bindgen_futures::spawn_local(async {
        if let Err(e) = run().await {
            if let Some(document) = web_sys::window().and_then(|w| w.document()) {
                let message = e.as_string().unwrap_or_else(|| format!("{e:?}"));
                done(&document, &format!("page error: {message}"), None, 0);
            }
        }
    });
}

async fn run() -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let document = window.document().ok_or("no document")?;
    let query = web_sys::UrlSearchParams::new_with_str(&window.location().search()?)?;
    let url = query.get("url").unwrap_or_else(|| {
        format!(
            "/flaky?id={}&script=503,429ra1,200",
            js_sys::Date::now() as u64
        )
    });
    let list = document
        .get_element_by_id("attempts")
        .ok_or("no #attempts")?;
    if let Some(code) = document.get_element_by_id("url") {
        code.set_text_content(Some(&url));
    }
    let request = Request::new_with_str(&url)?;
    let (result, attempts) = send(&request, &list).await;
    match result {
        Ok(response) => {
            let status = response.status();
            item(&list, attempts, Some(status), None, &status.to_string());
            let body = JsFuture::from(response.text()?).await?;
            let body = body.as_string().unwrap_or_default();
            let body: String = body.chars().take(200).collect();
            let summary = format!("{status} after {attempts} attempt(s): {body}");
            done(&document, &summary, Some(status), attempts);
        }
        Err(error) => {
            item(&list, attempts, None, None, &error);
            done(&document, &error, None, attempts);
        }
    }
    Ok(())
}

/// The request with retries: each failed attempt is listed by `on_retry`,
/// before its wait. Returns the outcome and the number of attempts.
#[cfg(feature = "retries")]
async fn send(request: &Request, list: &Element) -> (Result<Response, String>, u32) {
    use std::cell::Cell;
    use std::rc::Rc;
    use wasm_backoff_core::Config;
    use wasm_backoff_web::{Options, fetch_with_backoff};

    let failed = Rc::new(Cell::new(0));
    let (list, seen) = (list.clone(), failed.clone());
    let options = Options::new()
        .config(Config::new().base_ms(100.0).max_attempts(Some(5)))
        // (a 429, 503 or 529 would wait on 10 × base_ms by default, 1 s: a demo
        // page shows its retries sooner; a server-named wait still decides)
        .throttle_base_ms(100.0)
        .on_retry(move |info| {
            seen.set(info.attempt);
            let what = info
                .status
                .map_or_else(|| String::from("network error"), |s| s.to_string());
            // Whole ms: formatting an f64 would add ~10 KB of wasm to the page.
            let wait = info.delay_ms.round() as u64;
            let named = match info.retry_after_ms {
                Some(ms) => format!(" (the server named {} ms)", ms.round() as u64),
                None => String::new(),
            };
            let text = format!("{what}, retrying in {wait} ms{named}");
            item(&list, info.attempt, info.status, Some(wait), &text);
        });
    let result = fetch_with_backoff(request, &options)
        .await
        .map_err(|e| e.to_string());
    (result, failed.get() + 1)
}

/// One plain `fetch`, no retries (the size baseline).
#[cfg(not(feature = "retries"))]
async fn send(request: &Request, _list: &Element) -> (Result<Response, String>, u32) {
    let Some(window) = web_sys::window() else {
        return (Err(String::from("no window")), 0);
    };
    let result = JsFuture::from(window.fetch_with_request(request))
        .await
        .map(JsCast::unchecked_into)
        .map_err(|e| format!("network error: {e:?}"));
    (result, 1)
}

/// Appends `<li data-attempt data-status data-delay>attempt N: text</li>`.
fn item(list: &Element, attempt: u32, status: Option<u16>, delay_ms: Option<u64>, text: &str) {
    let Some(li) = list
        .owner_document()
        .and_then(|d| d.create_element("li").ok())
    else {
        return;
    };
    let _ = li.set_attribute("data-attempt", &attempt.to_string());
    if let Some(status) = status {
        let _ = li.set_attribute("data-status", &status.to_string());
    }
    if let Some(ms) = delay_ms {
        let _ = li.set_attribute("data-delay", &ms.to_string());
    }
    li.set_text_content(Some(&format!("attempt {attempt}: {text}")));
    let _ = list.append_child(&li);
}

/// Shows the outcome and marks the page done (`<body data-done="1"
/// data-attempts data-status>`), which is what tests wait for.
fn done(document: &Document, summary: &str, status: Option<u16>, attempts: u32) {
    if let Some(p) = document.get_element_by_id("result") {
        p.set_text_content(Some(summary));
    }
    if let Some(body) = document.body() {
        let _ = body.set_attribute("data-attempts", &attempts.to_string());
        if let Some(status) = status {
            let _ = body.set_attribute("data-status", &status.to_string());
        }
        let _ = body.set_attribute("data-done", "1");
    }
}
