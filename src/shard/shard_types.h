// Plain data shared by the shard host and its callers: kind limits, shard
// status and stop reasons, input results. No behaviour.
#ifndef TESSERA_SHARD_SHARD_TYPES_H_
#define TESSERA_SHARD_SHARD_TYPES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::shard {

enum class Codec : uint8_t { kMsgpack = 0, kJson = 1 };

// One shard kind, as declared in an app's tessera.json.
struct KindConfig {
  std::string name;
  Codec codec = Codec::kMsgpack;
  uint32_t tick_rate = 20;             // ticks per second
  uint32_t tick_budget_ms = 100;       // CPU time of one tick
  uint32_t memory_mb = 64;             // guest memory cap
  uint64_t fuel_per_tick = 200000000;  // one budget per tick (all its calls)
  uint32_t max_run_ms = 200;           // wall clock of one guest call
  uint32_t idle_shutdown_secs = 90;    // 0 = never
  // What hears of each stop: an http(s):// URL (POSTed, server/
  // stop_notifier.h) or a function ("module.export", or an export name that
  // one module's invoke trigger has), invoked with {shardId, kind, reason,
  // error} in a transaction (server/stop_functions.h). "" = nothing.
  std::string on_stop;
  // How often the host writes the shard's buffered entity writes
  // (tessera_writes) to the app's data, and at every stop. Manifest
  // "writeFlushMs", 100..60000.
  uint32_t write_flush_ms = 2000;
  // The input log (docs/record-replay.md): every tick's inputs, dt, fuel
  // and snapshot hash, and periodic saves, in a ring of record_mb MiB on
  // disk per shard, for `tessera replay`. Manifest "recordInputs" and
  // "recordMb" (1..4096).
  bool record_inputs = false;
  uint32_t record_mb = 64;
};

enum class ShardStatus : uint8_t { kStarting, kRunning, kStopped };

// Why a shard stopped.
enum class StopReason : uint8_t {
  kNone,
  kStopped,   // an operator or the API stopped it
  kIdle,      // no subscribers for idle_shutdown_secs
  kFinished,  // the module ended it
  kFailed,    // trap, panic, fuel, tick budget, watchdog, memory
  // This machine lost the database (ShardHost::Fence): stopped here only,
  // unsaved; the shard lives on wherever the cluster runs it next.
  kFenced,
};
const char* StopReasonName(StopReason r);
// Whether the shard has stopped for the whole cluster (its record, save and
// onStop go), rather than only on this machine (kFenced: it runs on from
// its save, here after a rejoin or on another machine).
inline bool StoppedForGood(StopReason r) { return r != StopReason::kFenced; }
const char* ShardStatusName(ShardStatus s);

// When an input was made, as its connection reports it (lag compensation,
// docs/protocol.md "View tick").
struct InputTiming {
  // The (fractional) tick the client was drawing; nullopt when not stamped.
  std::optional<double> view_tick;
  // The connection's smoothed round trip; nullopt until measured.
  std::optional<int64_t> rtt_us;
};

// The outcome of one input.
struct InputResult {
  std::string subscriber;  // who sent it ("" = the server side)
  uint64_t seq = 0;        // the caller's sequence number, echoed
  bool accepted = false;
  std::string rejection;  // the module's error text when refused
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_SHARD_TYPES_H_
