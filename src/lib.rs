//! The WebAssembly face of wasm-backoff.
//!
//! The split with JavaScript follows what each side is good at: JavaScript
//! reads option objects, owns strings, promises, timers and signals; this
//! crate and `wasm-backoff-core` compute numbers from numbers (presets,
//! ranges, schedules, statistics, the gate's and the queue's state
//! machines). The boundary is described once, in [`schema`], and only
//! numbers cross it: options through one record in wasm memory ([`io`]),
//! objects as handles into per-type slabs ([`slab`]), answers as numbers or
//! in a result record. No `JsValue`, no strings, no imports: the module
//! needs no externref table, no string codecs and no formatting. So the
//! exports are plain `#[unsafe(no_mangle)] extern "C"` functions of
//! numbers, which the JavaScript calls as they are (js/load/instantiate.js):
//! no binding generator runs over the module, and building it needs no
//! wasm-bindgen CLI (the wasm tests' runner does: a dev-dependency).
//!
//! Three modules ship from this crate, each with the calculator: the small
//! one (no features: what `fetchWithBackoff` needs), the gate's (feature
//! `gate`: the gate and its limiter) and the queue's (feature `queue`: the
//! task queue and the statistics). A page pays only for what it imports;
//! one using the gate and the queue downloads the calculator twice.
//!
//! Nothing a caller passes can reach a panic: every field is range-checked by
//! [`calc::decode`] and reported as an error code (a wasm trap would poison
//! the module for the whole page).
// no_std on wasm32 (the shipped module); natively std links in, so the crate
// also builds for the fuzzer, the generator and the native tests.
#![cfg_attr(target_arch = "wasm32", no_std)]

pub mod calc;
#[cfg(feature = "gate")]
pub mod gate;
pub mod io;
#[cfg(feature = "queue")]
pub mod queue;
pub mod schema;
pub mod slab;
#[cfg(feature = "queue")]
pub mod stats;

#[cfg(all(feature = "bare", target_arch = "wasm32"))]
mod bare {
    //! Only in the shipped module: std's panic runtime formats messages and
    //! locations (several KB of `core::fmt`); a trap needs none of it. No
    //! reachable path panics (inputs are validated first), so this is a
    //! backstop, not a behaviour.
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}

// Outside the shipped modules (the wasm tests, the full module's checks),
// std's panic runtime: the test harness links std anyway, and the cdylib
// needs a panic handler. (Nothing links `alloc`: objects live in `slab`'s
// pages, so the module has no allocator at all.)
#[cfg(all(not(feature = "bare"), target_arch = "wasm32"))]
extern crate std;
