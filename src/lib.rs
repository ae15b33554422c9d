//! The WebAssembly face of wasm-backoff.
//!
//! The split with JavaScript follows what each side is good at: the hand-
//! written `pkg/backoff.js` reads the options object (JS is the natural place
//! to look at JS values, and type errors are its to raise), while everything
//! with meaning — presets, ranges, the arithmetic, the random stream — is
//! here and in `wasm-backoff-core`. The boundary is plain numbers: no
//! `JsValue`, no strings, so the module needs no externref table, no string
//! codecs and no formatting, which is what keeps it a few KB.
//!
//! Nothing a caller passes can reach a panic: every field is range-checked by
//! `Config::validate` and reported as an error code (a wasm trap would poison
//! the module for the whole page).
// no_std on wasm32 (the shipped module); natively std links in, so the crate
// also builds as a cdylib for the fuzzer and the native tests.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

#[cfg(feature = "fetch")]
mod fetch;
#[cfg(feature = "gate")]
mod gate;
#[cfg(feature = "queue")]
mod queue;
mod raw;

#[cfg(feature = "fetch")]
pub use fetch::{input_buffer, retry_after, RawBudget, INPUT_LEN};
#[cfg(feature = "gate")]
pub use gate::RawGate;
#[cfg(feature = "queue")]
pub use queue::{queue_out, RawQueue};
pub use raw::{decode, RawBackoff, CHUNK, ERROR_SEED};

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

    use core::alloc::{GlobalAlloc, Layout};
    use lol_alloc::{AssumeSingleThreaded, FreeListAllocator};

    /// The module allocates only small things (the `RawBackoff` boxes): a
    /// free list is enough, and about 6 KB smaller than dlmalloc.
    /// Out of memory traps here, so the compiler sees that allocations never
    /// return null and drops `handle_alloc_error`, whose message formatting
    /// would otherwise ship in the module.
    struct TrapOnOom(AssumeSingleThreaded<FreeListAllocator>);

    // SAFETY: forwards to lol_alloc; AssumeSingleThreaded is sound because
    // this module is built for wasm32 without atomics (one thread).
    unsafe impl GlobalAlloc for TrapOnOom {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = self.0.alloc(layout);
            if p.is_null() {
                core::arch::wasm32::unreachable()
            }
            p
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            self.0.dealloc(ptr, layout)
        }
    }

    #[global_allocator]
    static ALLOC: TrapOnOom =
        TrapOnOom(unsafe { AssumeSingleThreaded::new(FreeListAllocator::new()) });
}
