//! The names and codes of the guest ABI, version 1 (`docs/guest-abi.md`,
//! `include/tessera/abi.h`). Shard code rarely needs them: the
//! [`export_shard!`](crate::export_shard) macro uses them.

/// The ABI version this crate implements.
pub const VERSION: i32 = 1;

/// Return code: success; the output buffer holds the result, if any.
pub const OK: i32 = 0;
/// Return code: refused; the output buffer holds UTF-8 error text.
pub const ERROR: i32 = 1;
/// Return code of `tessera_tick`: the module has finished.
pub const FINISHED: i32 = 2;
/// Return code: nothing to save, or an optional feature is off.
pub const NO_STATE: i32 = 3;

/// Codec id of MessagePack, passed to `tessera_init`.
pub const CODEC_MSGPACK: i32 = 0;
/// Codec id of JSON, passed to `tessera_init`.
pub const CODEC_JSON: i32 = 1;

/// Entity ids are below this (2^53), so JavaScript clients read them exactly.
pub const ENTITY_ID_LIMIT: u64 = 1 << 53;

/// Interest config flag: subscribers with equal visible sets share snapshots.
pub const INTEREST_FLAG_SHARED_SNAPSHOTS: u8 = 1;
/// Replication config flag: the ground plane is (x, z).
pub const REPLICATION_FLAG_Y_UP: u8 = 1;
/// `tessera_replicated` flag: a complete listing.
pub const REPLICATED_FLAG_FULL: u8 = 1;
/// Per changed entity: a new entity.
pub const REPLICATED_WHAT_NEW: u8 = 1;
/// Per changed entity: a position follows.
pub const REPLICATED_WHAT_POS: u8 = 2;

/// Lag compensation: the most history ticks a shard may ask for.
pub const MAX_HISTORY_TICKS: u32 = 256;
/// Lag compensation: the view delay a `max_view_delay_ms` of 0 stands for.
pub const DEFAULT_MAX_VIEW_DELAY_MS: u32 = 250;
