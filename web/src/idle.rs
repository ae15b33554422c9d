//! The idle timeout of a returned body ([`Options::idle_timeout_ms`]): the
//! response's body read through a `ReadableStream` of ours, which errors
//! with a `TimeoutError` when no chunk comes for that long while a read is
//! pending. The npm package's rule (`wasm-backoff/stream`,
//! `js/stream/body.js`): the clock runs only while the consumer waits for a
//! chunk (a consumer that stops reading is not a stalled server); one timer
//! per body, re-armed for what is left when it fires early, cleared at the
//! body's end, cancel and error.
//!
//! [`Options::idle_timeout_ms`]: crate::Options::idle_timeout_ms

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, future_to_promise};
use web_sys::{
    QueuingStrategy, ReadableStream, ReadableStreamDefaultController, ReadableStreamDefaultReader,
    Response, ResponseInit,
};

use crate::{Timer, timeout_error};

/// One body's state, shared by its `pull`, its `cancel` and its timer.
struct Idle {
    reader: ReadableStreamDefaultReader,
    ms: f64,
    /// A read is pending (the clock runs).
    waiting: Cell<bool>,
    /// When the pending read began (`Date.now()`).
    since: Cell<f64>,
    timer: RefCell<Option<Timer>>,
    /// The timer's callback (it re-arms itself).
    tick: RefCell<Option<Function>>,
    /// The `TimeoutError` that cancelled the reader (its pending read then ends as done).
    stalled: RefCell<Option<JsValue>>,
}

impl Idle {
    fn arm(&self, ms: f64) {
        if let Some(tick) = self.tick.borrow().as_ref() {
            *self.timer.borrow_mut() = Some(Timer::new(ms, tick));
        }
    }

    /// The timer fired: the body stalled, or re-arm for what is left.
    fn fired(&self) {
        drop(self.timer.borrow_mut().take());
        if !self.waiting.get() {
            return;
        }
        let left = self.since.get() + self.ms - js_sys::Date::now();
        if left > 0.0 {
            return self.arm(left);
        }
        let e = timeout_error("idle_timeout_ms (", self.ms);
        ignore(self.reader.cancel_with_reason(&e));
        *self.stalled.borrow_mut() = Some(e);
    }

    fn stop(&self) {
        self.waiting.set(false);
        drop(self.timer.borrow_mut().take());
    }

    /// The next chunk into `ctl`, or the end, or the error (a stall's).
    async fn pull(&self, ctl: ReadableStreamDefaultController) -> Result<JsValue, JsValue> {
        self.waiting.set(true);
        self.since.set(js_sys::Date::now());
        if self.timer.borrow().is_none() {
            self.arm(self.ms);
        }
        let read = JsFuture::from(self.reader.read()).await;
        self.waiting.set(false);
        let stalled = self.stalled.borrow_mut().take();
        let result = match (stalled, read) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok(r)) => {
                if Reflect::get(&r, &"done".into())?.is_truthy() {
                    ctl.close().map(|()| JsValue::UNDEFINED)
                } else {
                    return ctl
                        .enqueue_with_chunk(&Reflect::get(&r, &"value".into())?)
                        .map(|()| JsValue::UNDEFINED);
                }
            }
        };
        self.stop();
        result
    }
}

/// Awaits `p` and drops its outcome (so a rejection is handled).
fn ignore(p: Promise) {
    wasm_bindgen_futures::spawn_local(async move {
        let _ = JsFuture::from(p).await;
    });
}

/// `res` with its body read through the idle timeout (status, headers,
/// `url` and `redirected` kept), or `res` itself when it has no body or
/// its runtime refuses a part of this.
pub(crate) fn idle_body(res: Response, ms: f64) -> Response {
    wrap(&res, ms).unwrap_or(res)
}

fn wrap(res: &Response, ms: f64) -> Result<Response, JsValue> {
    let Some(body) = res.body() else {
        return Err(JsValue::NULL);
    };
    let idle = Rc::new(Idle {
        reader: body.get_reader().unchecked_into(),
        ms,
        waiting: Cell::new(false),
        since: Cell::new(0.0),
        timer: RefCell::new(None),
        tick: RefCell::new(None),
        stalled: RefCell::new(None),
    });
    // (the closures belong to JavaScript: freed when the stream is garbage)
    let weak: Weak<Idle> = Rc::downgrade(&idle);
    let tick = Closure::<dyn FnMut()>::new(move || {
        if let Some(idle) = weak.upgrade() {
            idle.fired();
        }
    });
    *idle.tick.borrow_mut() = Some(tick.into_js_value().unchecked_into());
    let (p, c) = (idle.clone(), idle);
    let pull = Closure::<dyn FnMut(ReadableStreamDefaultController) -> Promise>::new(move |ctl| {
        let idle = p.clone();
        future_to_promise(async move { idle.pull(ctl).await })
    });
    let cancel = Closure::<dyn FnMut(JsValue) -> Promise>::new(move |reason: JsValue| {
        c.stop();
        c.reader.cancel_with_reason(&reason)
    });
    let source = Object::new();
    Reflect::set(&source, &"pull".into(), &pull.into_js_value())?;
    Reflect::set(&source, &"cancel".into(), &cancel.into_js_value())?;
    let strategy = QueuingStrategy::new();
    strategy.set_high_water_mark(0.0);
    let stream = ReadableStream::new_with_underlying_source_and_strategy(&source, &strategy)?;
    let init = ResponseInit::new();
    init.set_status(res.status());
    init.set_status_text(&res.status_text());
    init.set_headers(&res.headers());
    let out = Response::new_with_opt_readable_stream_and_init(Some(&stream), &init)?;
    for (name, value) in [
        ("url", JsValue::from(res.url())),
        ("redirected", JsValue::from(res.redirected())),
    ] {
        let d = Object::new();
        Reflect::set(&d, &"value".into(), &value)?;
        Object::define_property(&out, &name.into(), &d);
    }
    Ok(out)
}
