//! Write a tessera compute module in Rust.
//!
//! A compute module is a `cdylib` crate the server compiles to WebAssembly
//! and runs in the same sandbox as shards, under a fuel budget and a
//! watchdog per call. This crate hides the `tessera_compute_v1` ABI
//! (`include/tessera/compute_abi.h`, `docs/compute-abi.md`) behind
//! [`register_module!`] and safe host functions.
//!
//! ```ignore
//! use std::sync::atomic::{AtomicU64, Ordering};
//! static TICKS: AtomicU64 = AtomicU64::new(0);
//!
//! fn on_init() {
//!     tessera_compute_sdk::log(1, "module init");
//! }
//!
//! fn on_tick(_dt_ms: u32) {
//!     let n = TICKS.fetch_add(1, Ordering::Relaxed) + 1;
//!     if let Err(e) = tessera_compute_sdk::state_set(&n.to_le_bytes()) {
//!         tessera_compute_sdk::log(2, &format!("state_set: {}", e));
//!     }
//! }
//!
//! fn on_invoke(input: &[u8]) -> Vec<u8> {
//!     input.to_vec()
//! }
//!
//! tessera_compute_sdk::register_module!(init: on_init, tick: on_tick, invoke: on_invoke);
//! ```
//!
//! Entry functions may return `()` or `Result<(), E>` (invoke: `Vec<u8>`,
//! `String` or a `Result` of them) with `E: Display`; an `Err` fails the
//! run with its text, and so does a panic, whose message the module logs
//! at level 4 before it traps. In-memory state (statics, heap) lasts only
//! while the instance stays loaded: keep what matters in the state blob
//! ([`state_get`] / [`state_set`]).
//!
//! The app's data and shards: [`data_call`] and [`shards_call`] take a
//! request you built as JSON text; with the `json` feature, modules
//! [`data`] (`get`, `lookup`, `list`, `count`, `insert`, `update`,
//! `delete`) and [`shards`] (`create`, `get`, `list`, `ticket`, `send`,
//! `publish`, `transfer`, `stop`) take and return `serde_json` values.
//! Every entry call that uses them is one transaction: its data changes
//! commit only if the call succeeds, and its `send` / `publish` happen
//! only then.
//!
//! The `json` feature adds typed helpers over `serde_json` (modules `json`,
//! `data`, `shards`); the `rand` feature adds `rng()` (a `rand` generator
//! seeded by the host) and re-exports `rand`.
#![warn(missing_docs)]

pub mod abi;
#[cfg(feature = "json")]
pub mod data;
mod host;
#[cfg(feature = "json")]
pub mod json;
#[cfg(feature = "json")]
pub mod shards;
mod sys;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
#[cfg(all(not(target_arch = "wasm32"), feature = "json"))]
mod fake_data;

#[doc(hidden)]
pub mod __private;

/// The `rand` crate (0.8, without its default features), with the `rand`
/// feature: use `tessera_compute_sdk::rand::Rng` and friends from here.
#[cfg(feature = "rand")]
pub use rand;

/// A `rand` [`StdRng`](rand::rngs::StdRng) seeded with 32 bytes of the
/// host's [`random_bytes`] (the `rand` feature). Modules have no entropy of
/// their own: `rand`'s `thread_rng` / `OsRng` need `getrandom`, which does
/// not build for wasm32-unknown-unknown. Keep the generator for the
/// instance's life (a static) or seed one per call; both are fine.
#[cfg(feature = "rand")]
pub fn rng() -> rand::rngs::StdRng {
    use rand::SeedableRng;
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&random_bytes(32));
    rand::rngs::StdRng::from_seed(seed)
}

use std::fmt::Display;

pub use host::{
    data_call, emit_channel, emit_event, emit_spatial, log, now_ms, random_bytes, shards_call,
    state_get, state_set, try_state_get, HostError,
};

/// What an `init`, `tick` or `event` function may return: `()` (always a
/// success) or `Result<(), E>` (an `Err` fails the run with its text).
pub trait EntryResult {
    /// `Err(text)` fails the run with `text` as its error message.
    fn into_entry(self) -> Result<(), String>;
}

impl EntryResult for () {
    fn into_entry(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: Display> EntryResult for Result<(), E> {
    fn into_entry(self) -> Result<(), String> {
        self.map_err(|e| e.to_string())
    }
}

/// What an `invoke` function may return: the result bytes (`Vec<u8>` or
/// `String`; JSON by convention, which the caller then gets as
/// `resultJson`), or a `Result` of them whose `Err` fails the call with its
/// text.
pub trait InvokeResult {
    /// The result bytes, or the error text of a failed call.
    fn into_invoke(self) -> Result<Vec<u8>, String>;
}

impl InvokeResult for Vec<u8> {
    fn into_invoke(self) -> Result<Vec<u8>, String> {
        Ok(self)
    }
}

impl InvokeResult for String {
    fn into_invoke(self) -> Result<Vec<u8>, String> {
        Ok(self.into_bytes())
    }
}

impl<E: Display> InvokeResult for Result<Vec<u8>, E> {
    fn into_invoke(self) -> Result<Vec<u8>, String> {
        self.map_err(|e| e.to_string())
    }
}

impl<E: Display> InvokeResult for Result<String, E> {
    fn into_invoke(self) -> Result<Vec<u8>, String> {
        self.map(String::into_bytes).map_err(|e| e.to_string())
    }
}

/// Generates the module's exports from its entry functions; use it once,
/// at the crate root.
///
/// ```ignore
/// register_module!(init: on_init, tick: on_tick, invoke: on_invoke);
/// register_module!(init: on_init, tick: on_tick, invoke: on_invoke, event: on_event);
/// ```
///
/// - `init()`: a fresh instance was loaded (after a deploy, an idle unload,
///   a failure). Read the state blob here.
/// - `tick(dt_ms: u32)`: each tick of the module's tick trigger; `dt_ms` is
///   the time since the previous one.
/// - `invoke(input: &[u8])`: a call of one of the module's invoke exports;
///   `input` is the JSON `{"export": "...", "params": {...},
///   "callerUserId": "...", "callerShardId": "..."}` and the function
///   returns the result bytes.
/// - `event(input: &[u8])` (optional): a `compute_event` the module's event
///   triggers subscribe to; `input` is the event JSON (`docs/compute-abi.md`
///   "Events"; `json::EventInput` reads it with the `json` feature).
///
/// Each argument is a function path or a closure. The generated exports
/// are the ABI's: the marker `tessera_compute_abi_v1`, `tessera_alloc`,
/// `tessera_output_ptr`, `tessera_output_len`, `tessera_compute_init`,
/// `tessera_compute_tick`, `tessera_compute_invoke` and, in the four-entry
/// form, `tessera_compute_event`.
#[macro_export]
macro_rules! register_module {
    (init: $init:expr, tick: $tick:expr, invoke: $invoke:expr $(,)?) => {
        $crate::__register_core!($init, $tick, $invoke);
    };
    (init: $init:expr, tick: $tick:expr, invoke: $invoke:expr, event: $event:expr $(,)?) => {
        $crate::__register_core!($init, $tick, $invoke);
        /// The module's event entry (tessera_compute_v1).
        ///
        /// # Safety
        /// Called by the host with its `tessera_alloc` buffer.
        #[no_mangle]
        pub unsafe extern "C" fn tessera_compute_event(ptr: usize, len: u32) -> i32 {
            $crate::__private::event(ptr, len, $event)
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __register_core {
    ($init:expr, $tick:expr, $invoke:expr) => {
        /// Marks a tessera_compute_v1 module.
        #[no_mangle]
        pub extern "C" fn tessera_compute_abi_v1() {}
        /// A buffer for the host to write an entry's input into.
        #[no_mangle]
        pub extern "C" fn tessera_alloc(len: u32) -> usize {
            $crate::__private::alloc(len)
        }
        /// Address of the output buffer.
        #[no_mangle]
        pub extern "C" fn tessera_output_ptr() -> usize {
            $crate::__private::output_ptr()
        }
        /// Length of the output buffer.
        #[no_mangle]
        pub extern "C" fn tessera_output_len() -> u32 {
            $crate::__private::output_len()
        }
        /// The module's init entry.
        #[no_mangle]
        pub extern "C" fn tessera_compute_init() -> i32 {
            $crate::__private::init($init)
        }
        /// The module's tick entry.
        #[no_mangle]
        pub extern "C" fn tessera_compute_tick(dt_ms: u32) -> i32 {
            $crate::__private::tick(dt_ms, $tick)
        }
        /// The module's invoke entry.
        ///
        /// # Safety
        /// Called by the host with its `tessera_alloc` buffer.
        #[no_mangle]
        pub unsafe extern "C" fn tessera_compute_invoke(ptr: usize, len: u32) -> i32 {
            $crate::__private::invoke(ptr, len, $invoke)
        }
    };
}
