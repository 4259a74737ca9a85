// tessera compute module ABI, version 1 (tessera_compute_v1): the one table
// of names, codes and limits shared by the host (src/compute/) and the
// compute SDKs (sdk/cpp/include/tessera/compute.h,
// sdk/rust/tessera-compute-sdk). See docs/compute-abi.md.
//
// A compute module is a WebAssembly module run in the same sandbox as a
// shard (src/guest/sandbox.h: fuel, watchdog, memory cap, log capture), with
// its own import module and exports. Plain C++17 with no includes, so it
// compiles for wasm32 guests and for the host.
#ifndef TESSERA_COMPUTE_ABI_H_
#define TESSERA_COMPUTE_ABI_H_

namespace tessera::compute_abi {

inline constexpr int kVersion = 1;
// The SDK versions a deploy may name ("sdkVersion"), oldest to newest, and
// the ABI version ("abiVersion") they pin.
inline constexpr const char kSdkVersion[] = "0.1.0";
inline constexpr const char kOldestSdkVersion[] = "0.1.0";
inline constexpr int kAbiVersion = 1;

// The only import module a compute module may use.
inline constexpr const char kImportModule[] = "tessera_compute_v1";
inline constexpr const char kImportPrefix[] = "tessera_compute_v";

// Host functions (all in kImportModule). (ptr, len) pairs name guest
// memory; a pair outside memory traps the call. Functions returning i32
// return 0 (or a count, where said) on success and a negative ErrorCode
// otherwise; last_error then describes the failure.
//   log(level: i32, ptr: i32, len: i32) -> ()
//   now_ms() -> i64                     unix time in milliseconds
//   random_bytes(ptr: i32, len: i32) -> i32   fills len (<= kMaxRandomBytes)
//                                       bytes from the host's CSPRNG
//   state_get(ptr: i32, cap: i32) -> i32
//       copies min(cap, size) bytes of the module's durable state blob to
//       ptr and returns its full size; -1 (kErrNoState) when none was set.
//       Call with cap 0 to learn the size.
//   state_set(ptr: i32, len: i32) -> i32
//       replaces the blob (len <= kMaxStateBytes); kErrStale when another
//       instance (the tick-lease holder) persisted since this instance last
//       read or wrote it: the write is dropped and a warning is logged.
//   emit_event(name_ptr, name_len, payload_ptr, payload_len) -> i32
//       raises compute event `name` (1..kMaxEventNameBytes) for the
//       modules' event triggers; payload <= kMaxEventPayloadBytes.
//   emit_channel(channel_ptr, channel_len, payload_ptr, payload_len) -> i32
//       a NOTIFY to the players of `channel` (docs/compute-abi.md
//       "Channels"); payload <= kMaxNotifyPayloadBytes. Returns the number
//       of connections reached.
//   emit_spatial(shard_ptr, shard_len, x: f32, y: f32, radius: f32,
//                payload_ptr, payload_len) -> i32
//       a NOTIFY to the players of shard `shard` whose interest-area centre
//       is within `radius` of (x, y). Returns the connections reached.
//   last_error(ptr: i32, cap: i32) -> i32
//       the last failed host call's error as JSON
//       {"code":"egress_budget","message":"..."}; returns its full size
//       (0 when no host call has failed in this entry call).
//   data(op_ptr, op_len, req_ptr, req_len) -> i32
//       one operation on the app's data (docs/compute-abi.md "The app's
//       data"), inside the entry call's transaction: op is one of
//       kDataOp*, req its JSON request. Returns the byte size of the JSON
//       reply, read with reply(); a negative ErrorCode otherwise (kErrData:
//       last_error's code is the data code, e.g. "ROW_NOT_FOUND";
//       kErrDataOps: over the per-call cap, maxDbOpsPerTick).
//   shards(op_ptr, op_len, req_ptr, req_len) -> i32
//       one operation on the app's shards (kShardsOp*, docs/compute-abi.md
//       "Shards"); reply and errors as data (kErrShards: last_error's code
//       is e.g. "SHARD_NOT_FOUND"). send and publish take effect only once
//       the entry call's transaction commits (nothing on a failed run).
//   reply(ptr, cap) -> i32
//       copies min(cap, size) bytes of the last data/shards reply to ptr
//       and returns its full size (0 when there is none).
inline constexpr const char kImportLog[] = "log";
inline constexpr const char kImportNowMs[] = "now_ms";
inline constexpr const char kImportRandomBytes[] = "random_bytes";
inline constexpr const char kImportStateGet[] = "state_get";
inline constexpr const char kImportStateSet[] = "state_set";
inline constexpr const char kImportEmitEvent[] = "emit_event";
inline constexpr const char kImportEmitChannel[] = "emit_channel";
inline constexpr const char kImportEmitSpatial[] = "emit_spatial";
inline constexpr const char kImportLastError[] = "last_error";
inline constexpr const char kImportData[] = "data";
inline constexpr const char kImportShards[] = "shards";
inline constexpr const char kImportReply[] = "reply";

// data ops and their JSON (reply shapes in docs/compute-abi.md; a row is
// {"id", "createdAt", "updatedAt", "version", ...fields}):
//   get     {"type", "id"}                         -> {"row": row|null}
//   lookup  {"type", "field", "value"}             -> {"row": row|null}
//   list    {"type", "where"?, "cursor"?, "limit"?} -> {"rows": [...],
//                                                       "nextCursor": str}
//   count   {"type", "where"?}                     -> {"count": n}
//   insert  {"type", "id"?, "fields": {...}}       -> {"row": row}
//   update  {"type", "id", "set": {...}}           -> {"row": row}
//   delete  {"type", "id"}                         -> {"deleted": bool}
inline constexpr const char kDataOpGet[] = "get";
inline constexpr const char kDataOpLookup[] = "lookup";
inline constexpr const char kDataOpList[] = "list";
inline constexpr const char kDataOpCount[] = "count";
inline constexpr const char kDataOpInsert[] = "insert";
inline constexpr const char kDataOpUpdate[] = "update";
inline constexpr const char kDataOpDelete[] = "delete";
// shards ops:
//   create   {"kind", "id", "params"?: any, "machine"?: str} -> shard
//   get      {"id"}                           -> {"shard": shard|null}
//   list     {"kind"?}                        -> {"shards": [shard...]}
//   ticket   {"id", "subscriber", "claims"?: {...}, "ttlSecs"?: n}
//                                             -> {"ticket": str}
//   send     {"id", "input": any}             -> {}
//   publish  {"target": "shard:<id>"|"group:<g>"|"all", "topic",
//             "data": str}                    -> {}
//   transfer {"from", "subscriber", "to", "claims"?: {...}} -> {}
//   stop     {"id"}                           -> {}
// shard = {"id", "kind", "status", "tick", "subscribers", "machine",
//          "stopReason"?, "error"?}.
inline constexpr const char kShardsOpCreate[] = "create";
inline constexpr const char kShardsOpGet[] = "get";
inline constexpr const char kShardsOpList[] = "list";
inline constexpr const char kShardsOpTicket[] = "ticket";
inline constexpr const char kShardsOpSend[] = "send";
inline constexpr const char kShardsOpPublish[] = "publish";
inline constexpr const char kShardsOpTransfer[] = "transfer";
inline constexpr const char kShardsOpStop[] = "stop";

// Exports. "Required" ones must be present or the module is refused.
inline constexpr const char kExportMemory[] = "memory";  // required
inline constexpr const char kExportAbiMarker[] =
    "tessera_compute_abi_v1";  // required, () -> ()
inline constexpr const char kAbiMarkerPrefix[] = "tessera_compute_abi_v";
inline constexpr const char kExportInitialize[] =
    "_initialize";  // optional, () -> ()
inline constexpr const char kExportAlloc[] =
    "tessera_alloc";  // required, (i32) -> i32
inline constexpr const char kExportOutputPtr[] =
    "tessera_output_ptr";  // required, () -> i32
inline constexpr const char kExportOutputLen[] =
    "tessera_output_len";  // required, () -> i32
// Entry points: 0 = success; anything else fails the run with the output
// buffer's text as the error message (cut to kMaxErrorBytes).
inline constexpr const char kExportInit[] =
    "tessera_compute_init";  // required, () -> i32
inline constexpr const char kExportTick[] =
    "tessera_compute_tick";  // required, (dt_ms: i32) -> i32
// (ptr, len) of the invoke input JSON {"export","params","callerUserId"};
// on success the output buffer holds the result bytes.
inline constexpr const char kExportInvoke[] =
    "tessera_compute_invoke";  // required, (i32, i32) -> i32
// (ptr, len) of the event JSON (docs/compute-abi.md "Events").
inline constexpr const char kExportEvent[] =
    "tessera_compute_event";  // optional, (i32, i32) -> i32

// Negative results of host functions.
enum ErrorCode : int {
  kErrNoState = -1,       // state_get: no blob yet
  kErrTooLarge = -2,      // a payload, name or blob over its limit
  kErrInvalid = -3,       // empty/invalid name, channel, non-finite coords
  kErrStale = -4,         // state_set refused: a newer revision exists
  kErrEgressBudget = -5,  // over maxEgressMsgsPerMin / maxEgressBytesPerMin
  kErrNotFound = -6,      // emit_spatial: no such shard
  kErrDataOps = -7,       // over maxDbOpsPerTick host data ops in this call
  kErrDepth = -8,         // emit_event: the cascade is at the depth limit
  kErrUnavailable = -9,   // the host cannot do it now (shutting down)
  kErrData = -10,         // a data op refused: last_error's code says why
  kErrShards = -11,       // a shards op refused: last_error's code says why
};
// The `code` strings of last_error's JSON, by ErrorCode.
inline constexpr const char kCodeNoState[] = "no_state";
inline constexpr const char kCodeTooLarge[] = "too_large";
inline constexpr const char kCodeInvalid[] = "invalid";
inline constexpr const char kCodeStale[] = "stale_state";
inline constexpr const char kCodeEgressBudget[] = "egress_budget";
inline constexpr const char kCodeNotFound[] = "not_found";
inline constexpr const char kCodeDataOps[] = "data_ops";
inline constexpr const char kCodeDepth[] = "event_depth";
inline constexpr const char kCodeUnavailable[] = "unavailable";
// kErrData / kErrShards without a structured code (the reply's code is
// normally the data or shards code: "ROW_NOT_FOUND", "SHARD_NOT_FOUND").
inline constexpr const char kCodeData[] = "data";
inline constexpr const char kCodeShards[] = "shards";

// Log levels of log(): the shard ABI's (tessera/abi.h).
enum LogLevel : int {
  kLogDebug = 0,
  kLogInfo = 1,
  kLogWarn = 2,
  kLogError = 3,
  kLogPanic = 4,  // the module panicked; it traps right after this call
};

// Limits.
inline constexpr unsigned kMaxStateBytes = 256u * 1024;  // state blob
inline constexpr unsigned kMaxNotifyPayloadBytes =
    1024;  // emit_channel/spatial
inline constexpr unsigned kMaxEventPayloadBytes = 65536;  // emit_event
inline constexpr unsigned kMaxEventNameBytes = 128;
inline constexpr unsigned kMaxChannelBytes = 160;
inline constexpr unsigned kMaxRandomBytes = 65536;
inline constexpr unsigned kMaxInvokeInputBytes = 1u << 20;  // invoke input
inline constexpr unsigned kMaxResultBytes = 1u << 20;       // invoke output
inline constexpr unsigned kMaxErrorBytes = 4096;            // error text
inline constexpr unsigned kMaxEventDepth = 8;  // emit_event cascade
inline constexpr unsigned kMaxDataRequestBytes = 2u << 20;  // data/shards req
inline constexpr unsigned kMaxReplyBytes = 8u << 20;        // a reply

}  // namespace tessera::compute_abi

#endif  // TESSERA_COMPUTE_ABI_H_
