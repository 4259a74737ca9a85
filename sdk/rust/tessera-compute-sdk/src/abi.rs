//! The names, codes and limits of the compute module ABI, version 1
//! (`tessera_compute_v1`; the table is `include/tessera/compute_abi.h`,
//! described in `docs/compute-abi.md`). Module code rarely needs these:
//! [`register_module!`](crate::register_module) and the host functions use
//! them.

/// The ABI version this crate implements (`abiVersion` of a deploy).
pub const ABI_VERSION: i32 = 1;
/// This crate's version (`sdkVersion` of a deploy).
pub const SDK_VERSION: &str = "0.1.0";
/// The import module of every host function.
pub const IMPORT_MODULE: &str = "tessera_compute_v1";

/// Log level: detail for debugging.
pub const LOG_DEBUG: i32 = 0;
/// Log level: normal operation.
pub const LOG_INFO: i32 = 1;
/// Log level: something unexpected the module handled.
pub const LOG_WARN: i32 = 2;
/// Log level: something failed.
pub const LOG_ERROR: i32 = 3;
/// Log level of a panic message; the module traps right after it.
pub const LOG_PANIC: i32 = 4;

/// Entry result: success.
pub const OK: i32 = 0;
/// Entry result: the run failed; the output buffer holds the error text.
pub const FAILED: i32 = 1;

/// Host error: `state_get` found no blob.
pub const ERR_NO_STATE: i32 = -1;
/// Host error: a payload, name or blob over its limit.
pub const ERR_TOO_LARGE: i32 = -2;
/// Host error: an empty or invalid name or channel, or non-finite coordinates.
pub const ERR_INVALID: i32 = -3;
/// Host error: `state_set` refused because a newer revision exists.
pub const ERR_STALE: i32 = -4;
/// Host error: over the module's per-minute egress budget.
pub const ERR_EGRESS_BUDGET: i32 = -5;
/// Host error: `emit_spatial` named no running shard.
pub const ERR_NOT_FOUND: i32 = -6;
/// Host error: over the host data operations allowed in one entry call.
pub const ERR_DATA_OPS: i32 = -7;
/// Host error: `emit_event` from a run at the cascade depth limit.
pub const ERR_DEPTH: i32 = -8;
/// Host error: the host cannot do it now (shutting down).
pub const ERR_UNAVAILABLE: i32 = -9;
/// Host error: a data operation was refused; the [`HostError`](crate::HostError)'s
/// code says why (`"ROW_NOT_FOUND"`, `"UNIQUE_VIOLATION"`, ...).
pub const ERR_DATA: i32 = -10;
/// Host error: a shards operation was refused; the
/// [`HostError`](crate::HostError)'s code says why (`"SHARD_NOT_FOUND"`, ...).
pub const ERR_SHARDS: i32 = -11;

/// The `code` string of a host error number (`last_error`'s "code"), or
/// `None` for a number the ABI does not define.
pub fn error_code_name(code: i32) -> Option<&'static str> {
    Some(match code {
        ERR_NO_STATE => "no_state",
        ERR_TOO_LARGE => "too_large",
        ERR_INVALID => "invalid",
        ERR_STALE => "stale_state",
        ERR_EGRESS_BUDGET => "egress_budget",
        ERR_NOT_FOUND => "not_found",
        ERR_DATA_OPS => "data_ops",
        ERR_DEPTH => "event_depth",
        ERR_UNAVAILABLE => "unavailable",
        _ => return None,
    })
}

/// The state blob is at most this many bytes (256 KiB).
pub const MAX_STATE_BYTES: usize = 256 * 1024;
/// An `emit_channel` / `emit_spatial` payload is at most this many bytes.
pub const MAX_NOTIFY_PAYLOAD_BYTES: usize = 1024;
/// An `emit_event` payload is at most this many bytes (64 KiB).
pub const MAX_EVENT_PAYLOAD_BYTES: usize = 65536;
/// An event name is 1 to this many bytes.
pub const MAX_EVENT_NAME_BYTES: usize = 128;
/// A channel name is 1 to this many bytes.
pub const MAX_CHANNEL_BYTES: usize = 160;
/// One `random_bytes` host call fills at most this many bytes;
/// [`random_bytes`](crate::random_bytes) splits larger requests.
pub const MAX_RANDOM_BYTES: usize = 65536;
/// The invoke input is at most this many bytes (1 MiB).
pub const MAX_INVOKE_INPUT_BYTES: usize = 1 << 20;
/// An invoke result is at most this many bytes (1 MiB).
pub const MAX_RESULT_BYTES: usize = 1 << 20;
/// The host keeps at most this many bytes of a run's error text.
pub const MAX_ERROR_BYTES: usize = 4096;
/// `emit_event` cascades stop at this depth.
pub const MAX_EVENT_DEPTH: u32 = 8;
/// A data or shards request is at most this many bytes (2 MiB).
pub const MAX_DATA_REQUEST_BYTES: usize = 2 << 20;
/// A data or shards reply is at most this many bytes (8 MiB).
pub const MAX_REPLY_BYTES: usize = 8 << 20;

/// The `data` host function's operations (`docs/compute-abi.md` "The
/// app's data"); [`data_call`](crate::data_call) takes them.
pub mod data_op {
    /// `{"type", "id"}` -> `{"row": row|null}`
    pub const GET: &str = "get";
    /// `{"type", "field", "value"}` -> `{"row": row|null}` (an indexed field)
    pub const LOOKUP: &str = "lookup";
    /// `{"type", "where"?, "cursor"?, "limit"?}` -> `{"rows", "nextCursor"}`
    pub const LIST: &str = "list";
    /// `{"type", "where"?}` -> `{"count": n}`
    pub const COUNT: &str = "count";
    /// `{"type", "id"?, "fields"}` -> `{"row": row}`
    pub const INSERT: &str = "insert";
    /// `{"type", "id", "set"}` -> `{"row": row}`
    pub const UPDATE: &str = "update";
    /// `{"type", "id"}` -> `{"deleted": bool}`
    pub const DELETE: &str = "delete";
}

/// The `shards` host function's operations (`docs/compute-abi.md`
/// "Shards"); [`shards_call`](crate::shards_call) takes them.
pub mod shards_op {
    /// `{"kind", "id", "params"?, "machine"?}` -> the shard
    pub const CREATE: &str = "create";
    /// `{"id"}` -> `{"shard": shard|null}`
    pub const GET: &str = "get";
    /// `{"kind"?}` -> `{"shards": [...]}`
    pub const LIST: &str = "list";
    /// `{"id", "subscriber", "claims"?, "ttlSecs"?}` -> `{"ticket": str}`
    pub const TICKET: &str = "ticket";
    /// `{"id", "input"}` -> `{}` (delivered after the call commits)
    pub const SEND: &str = "send";
    /// `{"target", "topic", "data"}` -> `{}` (after the call commits)
    pub const PUBLISH: &str = "publish";
    /// `{"from", "subscriber", "to", "claims"?}` -> `{}`
    pub const TRANSFER: &str = "transfer";
    /// `{"id"}` -> `{}`
    pub const STOP: &str = "stop";
}
