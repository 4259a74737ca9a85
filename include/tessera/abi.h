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
