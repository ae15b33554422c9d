//! The three places in wasm memory that JavaScript reads and writes
//! directly, so that calls take and return plain numbers only:
//!
//! - the options record ([`opts`], `RECORD_LEN` f64s at the offsets of
//!   [`crate::schema::Field`]), written by JS before a constructor call;
//! - the result record ([`out`], `OUT_LEN` f64s), written by calls that
//!   answer with more than one number (counters, statistics, a gate's
//!   status, a task record) and read by JS right after;
//! - the scratch buffer ([`scratch`], `CHUNK` f64s) for batches of draws.
//!
//! All three are statics in .bss: no bytes in the module, and their
//! addresses never change (JS keeps views on them; see js/wasm.js for
//! what it does when the memory grows).

use crate::schema::RECORD_LEN;
use core::cell::UnsafeCell;

/// Length of the result record.
pub const OUT_LEN: usize = 32;
/// Draws per `backoff_draws` call (32 KB).
pub const CHUNK: usize = 4096;

/// A static the single wasm thread reads and writes.
pub struct Cell<T>(UnsafeCell<T>);
// SAFETY: the module is built for wasm32 without atomics (one thread);
// natively (tests) each test uses its own handles and reads records right
// after the call that wrote them, as JS does.
unsafe impl<T> Sync for Cell<T> {}

impl<T> Cell<T> {
    pub(crate) const fn new(v: T) -> Self {
        Cell(UnsafeCell::new(v))
    }
    pub(crate) fn ptr(&self) -> *mut T {
        self.0.get()
    }
}

static OPTS: Cell<[f64; RECORD_LEN]> = Cell::new([f64::NAN; RECORD_LEN]);
static OUT: Cell<[f64; OUT_LEN]> = Cell::new([0.0; OUT_LEN]);
static SCRATCH: Cell<[f64; CHUNK]> = Cell::new([0.0; CHUNK]);

/// The options record's address.
#[unsafe(no_mangle)]
pub extern "C" fn opts() -> *mut f64 {
    OPTS.ptr() as *mut f64
}

/// The result record's address.
#[unsafe(no_mangle)]
pub extern "C" fn out() -> *mut f64 {
    OUT.ptr() as *mut f64
}

/// The scratch buffer's address.
#[unsafe(no_mangle)]
pub extern "C" fn scratch() -> *mut f64 {
    SCRATCH.ptr() as *mut f64
}

/// A copy of the options record as JS last wrote it.
pub fn record() -> [f64; RECORD_LEN] {
    // SAFETY: single-threaded; JS wrote it before the call that reads it.
    unsafe { *OPTS.ptr() }
}

/// Writes the options record (native tests play the JS side with this).
pub fn set_record(r: [f64; RECORD_LEN]) {
    // SAFETY: as in `record`.
    unsafe { *OPTS.ptr() = r }
}

/// Writes the first `values.len()` entries of the result record.
pub fn answer(values: &[f64]) {
    // SAFETY: single-threaded; JS reads it right after the call.
    let out = unsafe { &mut *OUT.ptr() };
    for (o, v) in out.iter_mut().zip(values) {
        *o = *v;
    }
}

/// The result record as last written (for native tests).
pub fn answered() -> [f64; OUT_LEN] {
    // SAFETY: as in `answer`.
    unsafe { *OUT.ptr() }
}

/// The scratch buffer, to fill.
pub fn scratch_mut() -> &'static mut [f64; CHUNK] {
    // SAFETY: single-threaded; the only writer is the call in progress and
    // JS copies the draws out before calling in again.
    unsafe { &mut *SCRATCH.ptr() }
}
