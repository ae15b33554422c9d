//! Objects owned by JavaScript live here: one pool of fixed-size slots per
//! type, handed out as handles (the slot's address). Taking and giving back
//! a slot are O(1) whatever the number of live objects: a freed slot goes on
//! the front of its pool's free list (the list is threaded through the free
//! slots themselves), and a new one comes off that front, or from the end of
//! the pool's current page, or from a fresh 64 KiB page.
//!
//! There is no general-purpose allocator in the module at all: nothing else
//! allocates, and this is a few dozen bytes of code where a free-list
//! allocator cost hundreds and walked its whole list on every call (with
//! 600 000 live objects, 94 µs per `new Backoff()`). Memory is reused, never
//! returned: wasm memory cannot shrink.

use crate::io::Cell;
use core::mem::{align_of, size_of};

/// One type's slots.
pub struct Pool {
    /// The first free slot (0 = none); each free slot holds the next's address.
    free: usize,
    /// The unused rest of the current region: `left` bytes from `next`
    /// (a length, not an end: a region may end at exactly 4 GiB).
    next: usize,
    left: usize,
}

impl Pool {
    /// An empty pool (its first page is taken on first use).
    pub const fn new() -> Cell<Pool> {
        Cell::new(Pool {
            free: 0,
            next: 0,
            left: 0,
        })
    }
}

const PAGE: usize = 65_536;

/// A fresh region for a pool: its start and length (0, 0 when memory is
/// exhausted). It grows with the memory (an eighth of it, at least a page):
/// measured, V8 runs a full garbage collection on nearly every grow of a
/// large memory, so a million objects must not mean thousands of grows.
#[cfg(target_arch = "wasm32")]
fn region() -> (usize, usize) {
    use core::arch::wasm32::{memory_grow, memory_size};
    let mut pages = (memory_size(0) / 8).max(1);
    let mut n = memory_grow(0, pages);
    if n == usize::MAX {
        // Near the 4 GiB limit an eighth may not fit where one page still does.
        pages = 1;
        n = memory_grow(0, 1);
    }
    if n == usize::MAX {
        (0, 0)
    } else {
        (n * PAGE, pages * PAGE)
    }
}

/// Natively (tests, the fuzzer), regions of a page from the system allocator.
#[cfg(not(target_arch = "wasm32"))]
fn region() -> (usize, usize) {
    let layout = std::alloc::Layout::from_size_align(PAGE, 16).expect("a valid layout");
    // SAFETY: a non-zero size; the region is never freed (as in wasm).
    (unsafe { std::alloc::alloc_zeroed(layout) as usize }, PAGE)
}

/// A slot of `size` bytes (a multiple of 16, at most a page) from `pool`, or 0.
#[inline(never)] // one copy for every type
fn take(pool: &Cell<Pool>, size: usize) -> usize {
    // SAFETY: single-threaded (see `Cell`); no reference outlives this call.
    let p = unsafe { &mut *pool.ptr() };
    if p.free != 0 {
        let slot = p.free;
        // SAFETY: a free slot holds the address of the next free one.
        p.free = unsafe { *(slot as *const usize) };
        return slot;
    }
    if p.left < size {
        let (start, len) = region();
        if start == 0 {
            return 0;
        }
        (p.next, p.left) = (start, len);
    }
    let slot = p.next;
    p.next = p.next.wrapping_add(size);
    p.left -= size;
    slot
}

/// The slot size of `T`: rounded up to 16 bytes, so every slot is aligned.
const fn slot_size<T>() -> usize {
    assert!(align_of::<T>() <= 16 && size_of::<T>() <= PAGE);
    let n = if size_of::<T>() > 16 {
        size_of::<T>()
    } else {
        16
    };
    (n + 15) & !15
}

/// Moves `value` into a slot of `pool`; its handle, or 0 when out of memory.
pub fn alloc<T>(pool: &Cell<Pool>, value: T) -> usize {
    let slot = take(pool, slot_size::<T>());
    if slot != 0 {
        // SAFETY: the slot is `slot_size::<T>()` bytes, 16-aligned, unused.
        unsafe { (slot as *mut T).write(value) };
    }
    slot
}

/// The object behind `handle`.
///
/// # Safety
/// `handle` came from [`alloc`] with the same `T` and was not freed since
/// (the JS classes keep their handle private and forget it when freeing),
/// and no other reference to the object is alive.
pub unsafe fn get<'a, T>(handle: usize) -> &'a mut T {
    // SAFETY: the caller's promise above.
    unsafe { &mut *(handle as *mut T) }
}

/// Gives the slot of `handle` back to `pool` (its `T` needs no drop: every
/// pooled type is plain data).
///
/// # Safety
/// As for [`get`]; the handle is not used again.
pub unsafe fn free(pool: &Cell<Pool>, handle: usize) {
    // SAFETY: the caller's promise above; the pool is this thread's alone.
    unsafe {
        let p = &mut *pool.ptr();
        *(handle as *mut usize) = p.free;
        p.free = handle;
    }
}
