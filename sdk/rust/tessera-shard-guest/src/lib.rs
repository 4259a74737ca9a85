//! Write a [tessera](../../../README.md) shard's simulation in Rust.
//!
//! A shard is a type implementing [`Shard`]; [`export_shard!`] turns it into
//! a WebAssembly guest that speaks the tessera guest ABI, version 1
//! (`docs/guest-abi.md`): it decodes params and inputs and encodes snapshots
//! in the codec the shard kind names (MessagePack or JSON, see [`codec`]),
//! turns a panic into the shard's failure message, and exports the optional
//! interest and replication hooks, and on request the transfer and message
//! hooks ([`transfer`], [`messages`]) and the keyed call and entity write
//! hooks ([`calls`]).
//!
//! ```ignore
//! use std::time::Duration;
//! use serde::{Deserialize, Serialize};
//! use tessera_shard_guest::{export_shard, Shard};
//!
//! #[derive(Deserialize)]
//! struct Params { width: f32, height: f32 }
//!
//! #[derive(Deserialize)]
//! #[serde(rename_all = "snake_case")]
//! enum Input { MoveTo { x: f32, y: f32 } }
//!
//! #[derive(Serialize)]
//! struct Snapshot { players: Vec<(String, f32, f32)> }
//!
//! struct Arena { players: Vec<(String, f32, f32)> }
//!
//! impl Shard for Arena {
//!     type Params = Params;
//!     type Input = Input;
//!     type Snapshot = Snapshot;
//!     fn init(_shard_id: &str, _params: Params) -> Result<Self, String> {
//!         Ok(Arena { players: Vec::new() })
//!     }
//!     fn apply_input(&mut self, sid: &str, input: Input) -> Result<(), String> {
//!         let Input::MoveTo { x, y } = input;
//!         self.players.push((sid.to_string(), x, y));
//!         Ok(())
//!     }
//!     fn tick(&mut self, _dt: Duration) {}
//!     fn snapshot(&self) -> Snapshot { Snapshot { players: self.players.clone() } }
//! }
//!
//! export_shard!(Arena);
//! ```
#![warn(missing_docs)]

pub mod abi;
mod binary;
pub mod calls;
pub mod codec;
pub mod interest;
pub mod log;
pub mod messages;
pub mod replicated;
pub mod rewind;
mod runtime;
mod talk_abi;
pub mod transfer;

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

pub use calls::{Call, Write};
pub use codec::Codec;
pub use interest::{EntityPos, InterestArea, InterestConfig, View};
pub use log::{log, log_debug, log_error, log_info, log_warn, Level};
pub use messages::{Outgoing, Target};
pub use replicated::{ReplicationConfig, Replicated};
pub use rewind::{LagCompensation, Rewind, Vec3};
pub use runtime::{codec, finish, finished};
pub use transfer::Auth;

/// A shard's simulation. One value per shard instance; the host calls
/// [`init`](Shard::init) (or [`restore`](Shard::restore)) once, then per
/// tick [`apply_input`](Shard::apply_input) for each queued input,
/// [`tick`](Shard::tick) and [`snapshot`](Shard::snapshot).
///
/// Everything after `snapshot` is optional, with defaults that leave the
/// feature off. A guest is single-threaded and should be deterministic: no
/// clocks, randomness, files or sockets (seed your own PRNG from params).
pub trait Shard: Sized {
    /// The create params, decoded from the shard's codec. An empty params
    /// buffer decodes as an empty map: mark fields `#[serde(default)]` to
    /// give them defaults.
    type Params: DeserializeOwned;
    /// One input, conventionally an externally tagged enum
    /// (`#[serde(rename_all = "snake_case")]`: `{"move_to":{"x":1,"y":2}}`).
    type Input: DeserializeOwned;
    /// What every subscriber is sent each tick, encoded in the codec.
    type Snapshot: Serialize;

    /// Creates the simulation for shard `shard_id`; an `Err` stops the shard
    /// from starting, with that reason.
    fn init(shard_id: &str, params: Self::Params) -> Result<Self, String>;

    /// Applies one input from subscriber `sid` (empty: sent by the server
    /// side). An `Err` rejects it with a reason shown to the player; the
    /// simulation should then be unchanged.
    fn apply_input(&mut self, sid: &str, input: Self::Input) -> Result<(), String>;

    /// Advances the simulation by `dt` (normally 1 / tickRate).
    fn tick(&mut self, dt: Duration);

    /// The current state, sent to subscribers.
    fn snapshot(&self) -> Self::Snapshot;

    /// The state to keep across restarts and moves; `Ok(None)`: nothing to
    /// save yet. The bytes are opaque to the host ([`save_value`] encodes a
    /// value as MessagePack). Exported only with `export_shard!(Type, save)`.
    fn save(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }

    /// Like [`init`](Shard::init), from bytes an earlier [`save`](Shard::save)
    /// returned ([`restore_value`] decodes what [`save_value`] wrote). An
    /// `Err` refuses the state: the shard does not start and the state is
    /// kept. Exported only with `export_shard!(Type, save)`.
    fn restore(shard_id: &str, params: Self::Params, state: &[u8]) -> Result<Self, String> {
        let _ = (shard_id, params, state);
        Err("this shard cannot restore saved state".to_string())
    }

    /// Interest on: the grid's cell size and margin. `None` (the default)
    /// keeps interest management off for this instance. Needs
    /// [`interest_area`](Shard::interest_area), and
    /// [`entities`](Shard::entities) or [`replicated`](Shard::replicated).
    fn interest(&self) -> Option<InterestConfig> {
        None
    }

    /// Fills `out` with every entity's ground-plane position, each tick,
    /// and returns true. The default returns false: the positions then come
    /// from the [`replicated`](Shard::replicated) store (x, y; or x, z with
    /// `y_up`).
    fn entities(&self, out: &mut Vec<EntityPos>) -> bool {
        let _ = out;
        false
    }

    /// Where subscriber `sid` looks from; `None`: it sees no entities.
    fn interest_area(&self, sid: &str) -> Option<InterestArea> {
        let _ = sid;
        None
    }

    /// The visibility filter (stealth, fog of war), asked for each entity
    /// the grid found in range of `sid`. Exported only with
    /// `export_shard!(Type, can_see)`.
    fn can_see(&self, sid: &str, id: u64) -> bool {
        let _ = (sid, id);
        true
    }

    /// Without replication: subscriber `sid`'s own snapshot, built from what
    /// it sees. Exported only with `export_shard!(Type, snapshot_visible)`;
    /// the default is the shared [`snapshot`](Shard::snapshot).
    fn snapshot_visible(&self, sid: &str, view: &View<'_>) -> Self::Snapshot {
        let _ = (sid, view);
        self.snapshot()
    }

    /// Replication on: the store the host reads after every tick. `None`
    /// (the default) keeps replication off for this instance.
    fn replicated(&mut self) -> Option<&mut Replicated> {
        None
    }

    /// Precision, byte budget and up axis of replication (defaults: 0.01, no
    /// budget, z up).
    fn replication_config(&self) -> ReplicationConfig {
        ReplicationConfig::default()
    }

    /// Lag compensation on: inputs stamped with the tick the player drew go
    /// to [`apply_input_at`](Shard::apply_input_at) with what it drew.
    /// `None` (the default) keeps it off. Needs replication on.
    fn lag_compensation(&self) -> Option<LagCompensation> {
        None
    }

    /// Applies an input with the subscriber's picture at the time (lag
    /// compensation on). The default ignores the rewind and calls
    /// [`apply_input`](Shard::apply_input).
    fn apply_input_at(&mut self, sid: &str, input: Self::Input, rewind: &Rewind) -> Result<(), String> {
        let _ = rewind;
        self.apply_input(sid, input)
    }

    /// A move of subscriber `sid` to another shard starts here: remove the
    /// player and return its state as bytes for the target's
    /// [`transfer_in`](Shard::transfer_in) (at most 1 MiB); `Ok(None)`: no
    /// entity for `sid` here (the move fails with "no player"); `Err`:
    /// refused, with that text. From now until the move ends the host
    /// refuses the player's inputs here. Exported, with `transfer_in`, only
    /// with `export_shard!(Type, transfers)`.
    fn transfer_out(&mut self, sid: &str) -> Result<Option<Vec<u8>>, String> {
        let _ = sid;
        Ok(None)
    }

    /// Takes player `sid` with the `state` bytes a `transfer_out` returned.
    /// `auth` says who moves, where from and with which ticket claims. An
    /// `Err` refuses the player (the move fails with that text and the
    /// source takes it back).
    ///
    /// With `returning` true the player is this shard's own, back from a
    /// move the target refused or that could not finish, with the bytes
    /// this shard's `transfer_out` gave: always take a returning player (a
    /// refusal is logged as a module bug and the player is lost to both
    /// shards). Exported only with `export_shard!(Type, transfers)`.
    fn transfer_in(&mut self, sid: &str, state: &[u8], auth: &Auth, returning: bool) -> Result<(), String> {
        let _ = (sid, state, auth, returning);
        Err("this shard does not take players from other shards".to_string())
    }

    /// The moves this shard starts itself, taken after every tick:
    /// `(subscriber, target shard id)` pairs, usually a list filled during
    /// the tick and emptied here (`std::mem::take`). Exported only with
    /// `export_shard!(Type, transfers, transfer_requests)`.
    fn transfer_requests(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The groups this shard is in now (messages to a group reach its
    /// members), read after init/restore and after every tick. Exported
    /// only with `export_shard!(Type, groups)`.
    fn groups(&self) -> Vec<String> {
        Vec::new()
    }

    /// The messages to send, taken after every tick, usually a list filled
    /// during the tick and emptied here (`std::mem::take`). Exported only
    /// with `export_shard!(Type, outbox)`.
    fn outbox(&mut self) -> Vec<Outgoing> {
        Vec::new()
    }

    /// One message from shard `from` (empty: published by the server side),
    /// delivered before this shard's next tick; each sender's messages come
    /// in the order it sent them. A `from` or `topic` that is not UTF-8 is
    /// passed with replacement characters. Exported only with
    /// `export_shard!(Type, on_message)`: only then do other shards' messages
    /// reach this shard.
    fn on_message(&mut self, from: &str, topic: &str, data: &[u8]) {
        let _ = (from, topic, data);
    }

    /// Every keyed call this shard still waits for, read after every tick
    /// ([`calls`] explains the pattern): return all pending calls each
    /// time, not only new ones (the host skips keys in flight and runs
    /// each other key once), and drop a call in
    /// [`on_call_result`](Shard::on_call_result). Exported, with
    /// `on_call_result`, only with `export_shard!(Type, calls)`.
    fn calls(&mut self) -> Vec<Call> {
        Vec::new()
    }

    /// The outcome of the keyed call `key`: `Ok(result)` (the function's
    /// JSON result), or `Err("CODE: message")` (the function refused, e.g.
    /// its error; `KEY_REUSED` when the key was used with other args;
    /// `FUNCTION_NOT_FOUND`). Comes once per key per shard run, before the
    /// next tick's inputs; apply the call's effect here. Exported only
    /// with `export_shard!(Type, calls)`.
    fn on_call_result(&mut self, key: &str, result: Result<serde_json::Value, String>) {
        let _ = (key, result);
    }

    /// The entity fields to write to the app's data, taken after every
    /// tick (drain a list you fill during the tick, `std::mem::take`); the
    /// host keeps the latest value per row and field and writes them every
    /// flush interval and when the shard stops. Exported only with
    /// `export_shard!(Type, writes)`.
    fn writes(&mut self) -> Vec<Write> {
        Vec::new()
    }
}

/// `value` as MessagePack (structs as maps), for [`Shard::save`].
pub fn save_value<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    codec::encode(Codec::MsgPack, value)
}

/// Decodes what [`save_value`] wrote, for [`Shard::restore`]; the error
/// reads `invalid saved state: ...`.
pub fn restore_value<T: DeserializeOwned>(state: &[u8]) -> Result<T, String> {
    codec::decode(Codec::MsgPack, state).map_err(|e| format!("invalid saved state: {}", e))
}

#[doc(hidden)]
pub mod __private;

/// Exports `Type` (a [`Shard`]) as this module's shard: defines every
/// export of the guest ABI, plus the interest, replication and lag
/// compensation exports (which report "off" unless the shard's hooks turn
/// them on). Use it once
/// per crate, at the crate root of a `cdylib`.
///
/// Optional exports are named after the type:
/// - `save`: `tessera_save` / `tessera_restore` ([`Shard::save`],
///   [`Shard::restore`]);
/// - `can_see`: `tessera_filter` ([`Shard::can_see`]);
/// - `snapshot_visible`: `tessera_snapshot_visible`
///   ([`Shard::snapshot_visible`]);
/// - `transfers`: `tessera_transfer_out` / `tessera_transfer_in`
///   ([`Shard::transfer_out`], [`Shard::transfer_in`]; the host refuses a
///   module with only one of them);
/// - `transfer_requests`: `tessera_transfer_requests`
///   ([`Shard::transfer_requests`]; needs `transfers` too, or the crate
///   does not compile);
/// - `groups`: `tessera_groups` ([`Shard::groups`]);
/// - `outbox`: `tessera_outbox` ([`Shard::outbox`]);
/// - `on_message`: `tessera_on_messages` ([`Shard::on_message`]);
/// - `calls`: `tessera_calls` / `tessera_on_call_result` ([`Shard::calls`],
///   [`Shard::on_call_result`]; always both);
/// - `writes`: `tessera_writes` ([`Shard::writes`]).
///
/// ```ignore
/// export_shard!(Arena);
/// export_shard!(Zone, save, can_see, snapshot_visible);
/// export_shard!(Realm, save, transfers, transfer_requests, groups, outbox, on_message);
/// export_shard!(Dungeon, save, calls, writes);
/// ```
///
/// `transfer_requests` comes with `transfers` (the host refuses a module
/// that asks for moves it cannot make):
///
/// ```
/// # use std::time::Duration;
/// # use tessera_shard_guest::{export_shard, Shard};
/// # #[derive(serde::Deserialize)] struct P {}
/// # struct Zone;
/// # impl Shard for Zone {
/// #     type Params = P; type Input = P; type Snapshot = ();
/// #     fn init(_: &str, _: P) -> Result<Self, String> { Ok(Zone) }
/// #     fn apply_input(&mut self, _: &str, _: P) -> Result<(), String> { Ok(()) }
/// #     fn tick(&mut self, _: Duration) {}
/// #     fn snapshot(&self) {}
/// # }
/// export_shard!(Zone, transfers, transfer_requests);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use std::time::Duration;
/// # use tessera_shard_guest::{export_shard, Shard};
/// # #[derive(serde::Deserialize)] struct P {}
/// # struct Zone;
/// # impl Shard for Zone {
/// #     type Params = P; type Input = P; type Snapshot = ();
/// #     fn init(_: &str, _: P) -> Result<Self, String> { Ok(Zone) }
/// #     fn apply_input(&mut self, _: &str, _: P) -> Result<(), String> { Ok(()) }
/// #     fn tick(&mut self, _: Duration) {}
/// #     fn snapshot(&self) {}
/// # }
/// export_shard!(Zone, transfer_requests); // error: needs `transfers` too
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_shard {
    ($ty:ty $(, $hook:ident)* $(,)?) => {
        $crate::__export_core!($ty);
        $( $crate::__export_hook!($ty, $hook); )*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export_core {
    ($ty:ty) => {
        #[doc(hidden)]
        fn __tessera_shard() -> &'static mut ::core::option::Option<$ty> {
            static mut SHARD: ::core::option::Option<$ty> = ::core::option::Option::None;
            // SAFETY: a guest is single-threaded and the host makes one call
            // at a time.
            unsafe { &mut *::core::ptr::addr_of_mut!(SHARD) }
        }
        #[no_mangle]
        pub extern "C" fn tessera_abi_v1() {}
        #[no_mangle]
        pub extern "C" fn tessera_alloc(len: u32) -> usize {
            $crate::__private::alloc(len)
        }
        #[no_mangle]
        pub extern "C" fn tessera_output_ptr() -> usize {
            $crate::__private::output_ptr()
        }
        #[no_mangle]
        pub extern "C" fn tessera_output_len() -> u32 {
            $crate::__private::output_len()
        }
        #[no_mangle]
        pub unsafe extern "C" fn tessera_init(codec: i32, id_ptr: usize, id_len: u32, params_ptr: usize, params_len: u32) -> i32 {
            $crate::__private::init::<$ty>(__tessera_shard(), codec, id_ptr, id_len, params_ptr, params_len)
        }
        #[no_mangle]
        pub unsafe extern "C" fn tessera_apply_input(sid_ptr: usize, sid_len: u32, input_ptr: usize, input_len: u32) -> i32 {
            $crate::__private::apply_input::<$ty>(__tessera_shard(), sid_ptr, sid_len, input_ptr, input_len)
        }
        #[no_mangle]
        pub extern "C" fn tessera_tick(dt_us: i64) -> i32 {
            $crate::__private::tick::<$ty>(__tessera_shard(), dt_us)
        }
        #[no_mangle]
        pub extern "C" fn tessera_snapshot() -> i32 {
            $crate::__private::snapshot::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub extern "C" fn tessera_interest_config() -> i32 {
            $crate::__private::interest_config::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub extern "C" fn tessera_entities() -> i32 {
            $crate::__private::entities::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub unsafe extern "C" fn tessera_interest_areas(ptr: usize, len: u32) -> i32 {
            $crate::__private::interest_areas::<$ty>(__tessera_shard(), ptr, len)
        }
        #[no_mangle]
        pub extern "C" fn tessera_replication_config() -> i32 {
            $crate::__private::replication_config::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub extern "C" fn tessera_replicated() -> i32 {
            $crate::__private::replicated::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub extern "C" fn tessera_lag_compensation() -> i32 {
            $crate::__private::lag_compensation::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub unsafe extern "C" fn tessera_apply_input_at(sid_ptr: usize, sid_len: u32, input_ptr: usize, input_len: u32, rewind_ptr: usize, rewind_len: u32) -> i32 {
            $crate::__private::apply_input_at::<$ty>(__tessera_shard(), sid_ptr, sid_len, input_ptr, input_len, rewind_ptr, rewind_len)
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export_hook {
    ($ty:ty, save) => {
        #[no_mangle]
        pub extern "C" fn tessera_save() -> i32 {
            $crate::__private::save::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub unsafe extern "C" fn tessera_restore(codec: i32, id_ptr: usize, id_len: u32, params_ptr: usize, params_len: u32, state_ptr: usize, state_len: u32) -> i32 {
            $crate::__private::restore::<$ty>(__tessera_shard(), codec, id_ptr, id_len, params_ptr, params_len, state_ptr, state_len)
        }
    };
    ($ty:ty, can_see) => {
        #[no_mangle]
        pub unsafe extern "C" fn tessera_filter(ptr: usize, len: u32) -> i32 {
            $crate::__private::filter::<$ty>(__tessera_shard(), ptr, len)
        }
    };
    ($ty:ty, snapshot_visible) => {
        #[no_mangle]
        pub unsafe extern "C" fn tessera_snapshot_visible(ptr: usize, len: u32) -> i32 {
            $crate::__private::snapshot_visible::<$ty>(__tessera_shard(), ptr, len)
        }
    };
    ($ty:ty, transfers) => {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        const __export_shard_transfer_requests_needs_transfers_too: () = ();
        #[no_mangle]
        pub unsafe extern "C" fn tessera_transfer_out(sid_ptr: usize, sid_len: u32) -> i32 {
            $crate::__private::transfer_out::<$ty>(__tessera_shard(), sid_ptr, sid_len)
        }
        #[no_mangle]
        pub unsafe extern "C" fn tessera_transfer_in(ptr: usize, len: u32) -> i32 {
            $crate::__private::transfer_in::<$ty>(__tessera_shard(), ptr, len)
        }
    };
    ($ty:ty, transfer_requests) => {
        const _: () = __export_shard_transfer_requests_needs_transfers_too;
        #[no_mangle]
        pub extern "C" fn tessera_transfer_requests() -> i32 {
            $crate::__private::transfer_requests::<$ty>(__tessera_shard())
        }
    };
    ($ty:ty, groups) => {
        #[no_mangle]
        pub extern "C" fn tessera_groups() -> i32 {
            $crate::__private::groups::<$ty>(__tessera_shard())
        }
    };
    ($ty:ty, outbox) => {
        #[no_mangle]
        pub extern "C" fn tessera_outbox() -> i32 {
            $crate::__private::outbox::<$ty>(__tessera_shard())
        }
    };
    ($ty:ty, on_message) => {
        #[no_mangle]
        pub unsafe extern "C" fn tessera_on_messages(ptr: usize, len: u32) -> i32 {
            $crate::__private::on_messages::<$ty>(__tessera_shard(), ptr, len)
        }
    };
    ($ty:ty, calls) => {
        #[no_mangle]
        pub extern "C" fn tessera_calls() -> i32 {
            $crate::__private::calls::<$ty>(__tessera_shard())
        }
        #[no_mangle]
        pub unsafe extern "C" fn tessera_on_call_result(ptr: usize, len: u32) -> i32 {
            $crate::__private::on_call_result::<$ty>(__tessera_shard(), ptr, len)
        }
    };
    ($ty:ty, writes) => {
        #[no_mangle]
        pub extern "C" fn tessera_writes() -> i32 {
            $crate::__private::writes::<$ty>(__tessera_shard())
        }
    };
    ($ty:ty, $other:ident) => {
        compile_error!(concat!(
            "export_shard!: unknown export `",
            stringify!($other),
            "` (known: save, can_see, snapshot_visible, transfers, transfer_requests, groups, outbox, on_message, calls, writes)"
        ));
    };
}
