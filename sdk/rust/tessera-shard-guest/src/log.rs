//! Logging, and the panic hook that turns a Rust panic into the shard's
//! failure message.
//!
//! In a wasm32 build [`log`] calls the module's one import,
//! `tessera_v1.log(level, ptr, len)`; the host copies the text during the
//! call. In a native build (tests) the lines go to standard error, or to
//! [`native::capture`] when a test collects them.

/// The level of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Detail for debugging (0).
    Debug,
    /// Normal operation (1).
    Info,
    /// Something unexpected the shard handled (2).
    Warn,
    /// Something failed (3).
    Error,
}

impl Level {
    /// The level's ABI number.
    pub fn code(self) -> i32 {
        match self {
            Level::Debug => 0,
            Level::Info => 1,
            Level::Warn => 2,
            Level::Error => 3,
        }
    }
}

/// The ABI level of a panic message: the host reports this text as the
/// shard's failure.
pub(crate) const PANIC_LEVEL: i32 = 4;

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "tessera_v1")]
extern "C" {
    #[link_name = "log"]
    fn tessera_v1_log(level: i32, ptr: *const u8, len: usize);
}

pub(crate) fn emit(level: i32, text: &str) {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: the host reads `len` bytes at `ptr` during the call only.
    unsafe {
        tessera_v1_log(level, text.as_ptr(), text.len())
    }
    #[cfg(not(target_arch = "wasm32"))]
    native::emit(level, text)
}

/// Sends one line to the shard's log on the server.
pub fn log(level: Level, text: &str) {
    emit(level.code(), text);
}

/// [`log`] at [`Level::Debug`].
pub fn log_debug(text: &str) {
    log(Level::Debug, text);
}
/// [`log`] at [`Level::Info`].
pub fn log_info(text: &str) {
    log(Level::Info, text);
}
/// [`log`] at [`Level::Warn`].
pub fn log_warn(text: &str) {
    log(Level::Warn, text);
}
/// [`log`] at [`Level::Error`].
pub fn log_error(text: &str) {
    log(Level::Error, text);
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

/// Installs the hook that logs a panic's message at the panic level; the
/// module then aborts (a trap, with `panic = "abort"`), and the host stops
/// the shard with reason `failed` and this text. Called by every export, so
/// it is in place before any shard code runs.
pub(crate) fn install_panic_hook() {
    static mut INSTALLED: bool = false;
    // SAFETY: a guest is single-threaded; native tests only ever set it to
    // true, and a second install is harmless.
    unsafe {
        if INSTALLED {
            return;
        }
        INSTALLED = true;
    }
    std::panic::set_hook(Box::new(|info| emit(PANIC_LEVEL, &panic_text(info))));
}

/// Native builds only: where log lines go.
#[cfg(not(target_arch = "wasm32"))]
pub mod native {
    use std::cell::RefCell;

    thread_local! {
        static CAPTURED: RefCell<Option<Vec<(i32, String)>>> = RefCell::new(None);
    }

    pub(crate) fn emit(level: i32, text: &str) {
        let kept = CAPTURED.with(|c| {
            if let Some(lines) = c.borrow_mut().as_mut() {
                lines.push((level, text.to_string()));
                true
            } else {
                false
            }
        });
        if !kept {
            eprintln!("[guest {}] {}", level, text);
        }
    }

    /// Runs `f` and returns its result with the `(level, text)` lines this
    /// thread logged meanwhile (a panic inside `f` is caught and returned as
    /// `Err`; its message is the last line, at level 4).
    pub fn capture<R>(f: impl FnOnce() -> R) -> (std::thread::Result<R>, Vec<(i32, String)>) {
        super::install_panic_hook();
        CAPTURED.with(|c| *c.borrow_mut() = Some(Vec::new()));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let lines = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
        (result, lines)
    }
}
