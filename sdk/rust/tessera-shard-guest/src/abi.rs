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

/// `tessera_transfer_in` flag: the shard's own player, back from a move the
/// target refused (or that could not finish).
pub const TRANSFER_IN_RETURNING: u32 = 1;

/// Outbox target kind: one shard, by id.
pub const TARGET_SHARD: u8 = 0;
/// Outbox target kind: every running shard in a group, except the sender.
pub const TARGET_GROUP: u8 = 1;
/// Outbox target kind: every running shard that takes messages, except the
/// sender.
pub const TARGET_ALL: u8 = 2;

/// Messages one shard may send per tick; the host refuses the rest.
pub const MAX_MESSAGES_SENT_PER_TICK: u32 = 64;
/// A message topic is 1 to this many bytes.
pub const MAX_TOPIC_BYTES: u32 = 128;
/// A message's data is at most this many bytes (64 KiB).
pub const MAX_MESSAGE_DATA_BYTES: u32 = 65536;
/// Groups one shard may be in.
pub const MAX_GROUPS: u32 = 64;
/// A group name is 1 to this many bytes.
pub const MAX_GROUP_NAME_BYTES: u32 = 128;
/// Messages queued for one shard; beyond it the host refuses new ones.
pub const MAX_INBOX_MESSAGES: u32 = 1024;
/// Messages delivered to one shard before each of its ticks.
pub const MAX_MESSAGES_APPLIED_PER_TICK: u32 = 64;
/// The largest state `transfer_out` may return (1 MiB); more fails the shard.
pub const MAX_TRANSFER_STATE_BYTES: u32 = 1 << 20;
/// Transfer requests the host takes from one shard per tick.
pub const MAX_TRANSFER_REQUESTS_PER_TICK: u32 = 256;

/// A keyed call's key is 1 to this many bytes.
pub const MAX_CALL_KEY_BYTES: u32 = 128;
/// A keyed call's function name is at most this many bytes.
pub const MAX_CALL_FUNCTION_BYTES: u32 = 256;
/// A keyed call's args are at most this many bytes of JSON (64 KiB).
pub const MAX_CALL_ARGS_BYTES: u32 = 65536;
/// Keyed calls one shard may have in flight; the host takes no more.
pub const MAX_CALLS_IN_FLIGHT: u32 = 1024;
/// The `tessera_calls` output is at most this many bytes (4 MiB).
pub const MAX_CALLS_OUTPUT_BYTES: u32 = 4 << 20;
/// Rows one shard may write per tick; the host refuses the rest.
pub const MAX_WRITES_PER_TICK: u32 = 4096;
/// The `tessera_writes` output is at most this many bytes (4 MiB).
pub const MAX_WRITES_OUTPUT_BYTES: u32 = 4 << 20;
/// A keyed call's result is at most this many bytes of JSON (1 MiB).
pub const MAX_CALL_RESULT_BYTES: u32 = 1 << 20;
