// tessera guest ABI, version 1: the one table of names and codes shared by
// the host (src/) and the guest SDK (sdk/cpp/). See docs/guest-abi.md.
//
// It lives in include/tessera/, the only directory the host and the SDK
// share: the host's include path is src/ and include/ (not the SDK's
// headers), the SDK's is sdk/cpp/include plus this directory's parent
// (an installed SDK carries a copy in its own include/tessera/).
//
// This header is plain C++17 with no includes, so it compiles both for
// wasm32 guests and for the host.
#ifndef TESSERA_ABI_H_
#define TESSERA_ABI_H_

namespace tessera::abi {

inline constexpr int kVersion = 1;

// The only import module a guest may use, and its one function:
//   log(level: i32, ptr: i32, len: i32) -> ()
inline constexpr const char kImportModule[] = "tessera_v1";
inline constexpr const char kImportLog[] = "log";

// Exports. "Required" ones must be present or the module is refused.
inline constexpr const char kExportMemory[] = "memory";              // required
inline constexpr const char kExportAbiMarker[] = "tessera_abi_v1";   // required, () -> ()
inline constexpr const char kAbiMarkerPrefix[] = "tessera_abi_v";
inline constexpr const char kExportInitialize[] = "_initialize";     // optional, () -> ()
inline constexpr const char kExportAlloc[] = "tessera_alloc";        // required, (i32) -> i32
inline constexpr const char kExportInit[] = "tessera_init";          // required, (i32 x5) -> i32
inline constexpr const char kExportRestore[] = "tessera_restore";    // optional, (i32 x7) -> i32
inline constexpr const char kExportApplyInput[] = "tessera_apply_input";  // required, (i32 x4) -> i32
inline constexpr const char kExportTick[] = "tessera_tick";          // required, (i64) -> i32
inline constexpr const char kExportSnapshot[] = "tessera_snapshot";  // required, () -> i32
inline constexpr const char kExportSave[] = "tessera_save";          // optional, () -> i32
inline constexpr const char kExportOutputPtr[] = "tessera_output_ptr";  // required, () -> i32
inline constexpr const char kExportOutputLen[] = "tessera_output_len";  // required, () -> i32

// Interest management and replication (all optional; docs/guest-abi.md,
// "Interest and replication"). Binary layouts are little-endian.
inline constexpr const char kExportInterestConfig[] = "tessera_interest_config";  // () -> i32
inline constexpr const char kExportEntities[] = "tessera_entities";              // () -> i32
inline constexpr const char kExportInterestAreas[] = "tessera_interest_areas";   // (i32 x2) -> i32
inline constexpr const char kExportFilter[] = "tessera_filter";                  // (i32 x2) -> i32
inline constexpr const char kExportSnapshotVisible[] = "tessera_snapshot_visible";  // (i32 x2) -> i32
inline constexpr const char kExportReplicationConfig[] = "tessera_replication_config";  // () -> i32
inline constexpr const char kExportReplicated[] = "tessera_replicated";          // () -> i32
// Lag compensation (optional; docs/guest-abi.md, "Lag compensation").
inline constexpr const char kExportLagCompensation[] = "tessera_lag_compensation";  // () -> i32
inline constexpr const char kExportApplyInputAt[] = "tessera_apply_input_at";       // (i32 x6) -> i32

// Transfers and messages between shards (all optional; docs/guest-abi.md,
// "Transfers and messages"). Layouts are little-endian; a `str` is a u32
// byte length followed by that many bytes.
//   transfer_out(sid_ptr, sid_len): kOk, output = the player's state bytes
//     (the entity is gone from this shard); kNoState = no entity for sid;
//     kError = refused, output = text.
//   transfer_in(ptr, len), arg = u32 flags (kTransferInReturning) | str
//     subscriber | str peer_shard (where it comes from; when returning, the
//     shard that refused it) | str claims_json | str state: kOk = added;
//     kError = refused, output = text (a returning player must be taken).
//   transfer_requests(): kOk, output = u32 count | count x (str subscriber,
//     str target_shard); kNoState = none. Taken after every tick.
//   groups(): kOk, output = u32 count | count x str; kNoState = no groups.
//     Called after init/restore and after every tick.
//   outbox(): kOk, output = u32 count | count x (u8 target_kind, str target,
//     str topic, str data); kNoState = empty. Taken after every tick.
//   on_messages(ptr, len), arg = u32 count | count x (str from, str topic,
//     str data): kOk. `from` is "" for a message the server published.
// Exporting only one of transfer_out / transfer_in, or transfer_requests
// without both, is refused when the shard starts.
inline constexpr const char kExportTransferOut[] = "tessera_transfer_out";  // (i32 x2) -> i32
inline constexpr const char kExportTransferIn[] = "tessera_transfer_in";    // (i32 x2) -> i32
inline constexpr const char kExportTransferRequests[] = "tessera_transfer_requests";  // () -> i32
inline constexpr const char kExportGroups[] = "tessera_groups";            // () -> i32
inline constexpr const char kExportOutbox[] = "tessera_outbox";            // () -> i32
inline constexpr const char kExportOnMessages[] = "tessera_on_messages";   // (i32 x2) -> i32

inline constexpr unsigned kTransferInReturning = 1;  // transfer_in flags
// outbox target_kind
enum TargetKind : int { kTargetShard = 0, kTargetGroup = 1, kTargetAll = 2 };

// Limits of messages between shards; beyond them a message is refused
// (counted and logged by the host, never dropped silently).
inline constexpr unsigned kMaxMessagesSentPerTick = 64;    // per shard
inline constexpr unsigned kMaxTopicBytes = 128;            // topic: 1..128 B
inline constexpr unsigned kMaxMessageDataBytes = 65536;    // data: <= 64 KiB
inline constexpr unsigned kMaxGroups = 64;                 // per shard
inline constexpr unsigned kMaxGroupNameBytes = 128;        // 1..128 B
inline constexpr unsigned kMaxInboxMessages = 1024;        // queued per shard
inline constexpr unsigned kMaxMessagesAppliedPerTick = 64; // per shard
// Transfers: a player's state from transfer_out, and requests per tick.
inline constexpr unsigned kMaxTransferStateBytes = 1u << 20;
inline constexpr unsigned kMaxTransferRequestsPerTick = 256;

// The app's data and functions (all optional; docs/guest-abi.md, "Keyed
// calls and entity writes"). Payloads are UTF-8 JSON.
//   calls(): kOk, output = [{"key": str, "function": "module.export" or
//     "export", "args": any}, ...] (every call the shard still waits for;
//     the host skips keys in flight and sends each other key once);
//     kNoState = none. Taken after every tick.
//   on_call_result(ptr, len), arg = {"key": str, "ok": true, "result": any}
//     or {"key": str, "ok": false, "error": "CODE: message"}: kOk. Called
//     before the next tick's inputs, once per key per shard run.
//   writes(): kOk, output = [{"entity": "Type", "id": str, "set": {field:
//     value, ...}}, ...]; kNoState = none. Taken after every tick; the host
//     keeps the latest value per row and field and writes them every
//     flush interval (2 s) and when the shard stops.
// An input whose subscriber id is empty comes from the server (a function's
// shards.send): no connection can have an empty subscriber id.
inline constexpr const char kExportCalls[] = "tessera_calls";                  // () -> i32
inline constexpr const char kExportOnCallResult[] = "tessera_on_call_result";  // (i32 x2) -> i32
inline constexpr const char kExportWrites[] = "tessera_writes";                // () -> i32

// Limits of keyed calls and entity writes; beyond them the host refuses
// (logged on the shard's log, counted), never drops silently.
inline constexpr unsigned kMaxCallKeyBytes = 128;           // key: 1..128 B
inline constexpr unsigned kMaxCallFunctionBytes = 256;
inline constexpr unsigned kMaxCallArgsBytes = 65536;        // args JSON
inline constexpr unsigned kMaxCallsInFlight = 1024;         // per shard
inline constexpr unsigned kMaxCallsOutputBytes = 4u << 20;  // calls() JSON
inline constexpr unsigned kMaxWritesPerTick = 4096;         // rows per tick
inline constexpr unsigned kMaxWritesOutputBytes = 4u << 20; // writes() JSON
inline constexpr unsigned kMaxCallResultBytes = 1u << 20;   // result JSON

// Codec ids passed to tessera_init / tessera_restore.
enum Codec : int { kCodecMsgpack = 0, kCodecJson = 1 };

// Return codes of the guest's exported calls.
enum Code : int {
  kOk = 0,        // success; the output buffer holds the result, if any
  kError = 1,     // refused; the output buffer holds UTF-8 error text
  kFinished = 2,  // (tessera_tick only) the module has finished; output
                  // holds an optional UTF-8 reason
  kNoState = 3,   // tessera_save: nothing to save; tessera_interest_config /
                  // tessera_replication_config: the feature is off
};

// Log levels of tessera_v1.log.
enum LogLevel : int {
  kLogDebug = 0,
  kLogInfo = 1,
  kLogWarn = 2,
  kLogError = 3,
  kLogPanic = 4,  // the guest panicked; it traps right after this call and
                  // the host reports this text as the failure message
};

// Interest and replication: limits and flag bits of the layouts in
// docs/guest-abi.md, "Interest and replication".
// Entity ids are below this (2^53), so JavaScript clients read them exactly.
inline constexpr unsigned long long kEntityIdLimit = 1ULL << 53;

// Flag bits of those layouts.
inline constexpr unsigned kInterestFlagSharedSnapshots = 1;  // interest config
inline constexpr unsigned kReplicationFlagYUp = 1;  // replication config
inline constexpr unsigned kReplicatedFlagFull = 1;  // tessera_replicated flags
inline constexpr unsigned kReplicatedWhatNew = 1;   // per changed entity
inline constexpr unsigned kReplicatedWhatPos = 2;   // per changed entity

// Lag compensation: history_ticks is 1..kMaxHistoryTicks; a
// max_view_delay_ms of 0 means kDefaultMaxViewDelayMs.
inline constexpr unsigned kMaxHistoryTicks = 256;
inline constexpr unsigned kDefaultMaxViewDelayMs = 250;

}  // namespace tessera::abi

#endif  // TESSERA_ABI_H_
