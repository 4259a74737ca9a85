//! The export bodies [`register_module!`](crate::register_module) calls.
//! Not part of the public API.

use crate::abi;
use crate::{EntryResult, InvokeResult};

struct Buffers {
    /// The last `tessera_alloc` buffer: the host writes the invoke or event
    /// input there.
    input: Vec<u8>,
    /// The result of an invoke, or a failed entry's error text.
    output: Vec<u8>,
}

static mut BUFFERS: Buffers = Buffers { input: Vec::new(), output: Vec::new() };

#[allow(clippy::mut_from_ref)]
fn buffers() -> &'static mut Buffers {
    // SAFETY: a module is single-threaded and the host makes one call at a
    // time; no caller holds two of these references at once.
    unsafe { &mut *std::ptr::addr_of_mut!(BUFFERS) }
}

/// A buffer of `len` bytes for the host to write an entry's input into.
/// It stays valid until the next `tessera_alloc` or the entry that takes it.
pub fn alloc(len: u32) -> usize {
    let input = &mut buffers().input;
    input.clear();
    input.resize(len as usize, 0);
    input.as_mut_ptr() as usize
}

/// Address of the output buffer.
pub fn output_ptr() -> usize {
    buffers().output.as_ptr() as usize
}

/// Length of the output buffer.
pub fn output_len() -> u32 {
    buffers().output.len() as u32
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn output() -> &'static [u8] {
    &buffers().output
}

pub(crate) fn clear_output() {
    buffers().output.clear();
}

/// The input bytes at (ptr, len): the `tessera_alloc` buffer when that is
/// what the host passes (the usual case), else a copy of guest memory there.
unsafe fn take_input(ptr: usize, len: u32) -> Vec<u8> {
    let len = len as usize;
    let b = buffers();
    if ptr == b.input.as_ptr() as usize && len <= b.input.len() {
        let mut input = std::mem::take(&mut b.input);
        input.truncate(len);
        input
    } else if len == 0 || ptr == 0 {
        Vec::new()
    } else {
        std::slice::from_raw_parts(ptr as *const u8, len).to_vec()
    }
}

/// The text a panic reports: its message and where it happened.
fn panic_text(info: &std::panic::PanicInfo<'_>) -> String {
    let payload = info.payload();
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    };
    match info.location() {
        Some(at) => format!("{} (at {}:{}:{})", message, at.file(), at.line(), at.column()),
        None => message,
    }
}

/// Installs, once, the hook that logs a panic's text at
/// [`abi::LOG_PANIC`]; with `panic = "abort"` the module then traps and the
/// host fails the run with that text.
pub fn install_panic_hook() {
    static mut INSTALLED: bool = false;
    // SAFETY: single-threaded module (native tests only ever set it true).
    unsafe {
        if INSTALLED {
            return;
        }
        INSTALLED = true;
    }
    std::panic::set_hook(Box::new(|info| crate::log(abi::LOG_PANIC, &panic_text(info))));
}

fn begin() {
    install_panic_hook();
    clear_output();
}

fn fail(error: String) -> i32 {
    let out = &mut buffers().output;
    out.clear();
    out.extend_from_slice(error.as_bytes());
    abi::FAILED
}

fn finish(result: Result<(), String>) -> i32 {
    match result {
        Ok(()) => abi::OK,
        Err(e) => fail(e),
    }
}

/// `tessera_compute_init`.
pub fn init<R: EntryResult>(f: impl FnOnce() -> R) -> i32 {
    begin();
    finish(f().into_entry())
}

/// `tessera_compute_tick`.
pub fn tick<R: EntryResult>(dt_ms: u32, f: impl FnOnce(u32) -> R) -> i32 {
    begin();
    finish(f(dt_ms).into_entry())
}

/// `tessera_compute_invoke`.
///
/// # Safety
/// (ptr, len) is the `tessera_alloc` buffer or other guest memory.
pub unsafe fn invoke<R: InvokeResult>(ptr: usize, len: u32, f: impl FnOnce(&[u8]) -> R) -> i32 {
    begin();
    let input = take_input(ptr, len);
    match f(&input).into_invoke() {
        Ok(bytes) => {
            buffers().output = bytes;
            abi::OK
        }
        Err(e) => fail(e),
    }
}

/// `tessera_compute_event`.
///
/// # Safety
/// As [`invoke`].
pub unsafe fn event<R: EntryResult>(ptr: usize, len: u32, f: impl FnOnce(&[u8]) -> R) -> i32 {
    begin();
    let input = take_input(ptr, len);
    finish(f(&input).into_entry())
}
