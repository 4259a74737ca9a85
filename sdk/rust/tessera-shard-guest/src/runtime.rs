//! The state every export shares: the output buffer, the codec and the
//! finish state, plus the argument buffers of `tessera_alloc`.

use std::alloc::Layout;

use crate::codec::Codec;

pub(crate) struct Runtime {
    pub output: Vec<u8>,
    pub codec: Codec,
    pub finished: bool,
    pub reason: String,
}

static mut RUNTIME: Runtime =
    Runtime { output: Vec::new(), codec: Codec::MsgPack, finished: false, reason: String::new() };

/// The shared state. A guest is single-threaded and the host makes one call
/// at a time; callers never hold two of these references at once.
#[allow(clippy::mut_from_ref)]
pub(crate) fn runtime() -> &'static mut Runtime {
    // SAFETY: single-threaded guest; see above.
    unsafe { &mut *std::ptr::addr_of_mut!(RUNTIME) }
}

/// The codec of this instance (MessagePack before `tessera_init`).
pub fn codec() -> Codec {
    runtime().codec
}

/// Ends the shard. May be called from `init`, `restore`, `apply_input` or
/// `tick`; the current call completes normally, and the next `tessera_tick`
/// returns `finished` with `reason` (may be empty) without calling the
/// shard's `tick` again. The host then stops the shard with reason
/// `finished`. The first reason wins.
pub fn finish(reason: &str) {
    let rt = runtime();
    if rt.finished {
        return;
    }
    rt.finished = true;
    rt.reason = reason.to_string();
}

/// Whether [`finish`] has been called.
pub fn finished() -> bool {
    runtime().finished
}

/// Bytes in front of each `tessera_alloc` buffer: its size, so the export
/// that receives it can free it whatever length it is told.
const HEADER: usize = 8;

/// A fresh buffer of `len` bytes for the host to write an argument into; 0
/// when memory is exhausted.
pub fn alloc(len: u32) -> usize {
    let total = match (len as usize).checked_add(HEADER) {
        Some(t) => t,
        None => return 0,
    };
    let layout = match Layout::from_size_align(total, HEADER) {
        Ok(l) => l,
        Err(_) => return 0,
    };
    // SAFETY: `layout` has a non-zero size.
    let base = unsafe { std::alloc::alloc(layout) };
    if base.is_null() {
        return 0;
    }
    // SAFETY: `base` is valid for `total` >= HEADER bytes, aligned to 8.
    unsafe { (base as *mut usize).write(total) };
    base as usize + HEADER
}

/// An argument buffer from `tessera_alloc`, freed when dropped; pointer 0
/// is an empty argument.
pub(crate) struct Arg {
    ptr: usize,
    len: usize,
}

impl Arg {
    /// # Safety
    /// `ptr` is 0 or came from [`alloc`] with at least `len` bytes, and is
    /// not used again by the caller.
    pub unsafe fn new(ptr: usize, len: u32) -> Arg {
        Arg { ptr, len: len as usize }
    }
    pub fn bytes(&self) -> &[u8] {
        if self.ptr == 0 {
            return &[];
        }
        // SAFETY: see `new`.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Arg {
    fn drop(&mut self) {
        if self.ptr == 0 {
            return;
        }
        // SAFETY: `ptr` came from `alloc`, which stored the allocation's
        // size in the header.
        unsafe {
            let base = (self.ptr - HEADER) as *mut u8;
            let total = (base as *const usize).read();
            std::alloc::dealloc(base, Layout::from_size_align_unchecked(total, HEADER));
        }
    }
}
