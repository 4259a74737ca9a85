// What a shard asks of the app's functions and data (include/tessera/abi.h,
// "The app's data and functions"; docs/guest-abi.md): the ports the shard
// host declares and the server implements (server/call_runner.h,
// server/entity_writer.h).
//
// Keyed calls: after every tick the host takes calls(), skips every key in
// flight for this shard run, and submits each other key once to the
// CallGateway. The result comes back through ShardHost::DeliverCallResult
// (any thread) for that shard *run*: a shard started again (Restore after a
// crash, or a new Create) is a new run with a new run id, and results for
// an older run are dropped (the new run lists its calls again; the stored
// result answers them without running the function again). The host passes
// each result to on_call_result before the shard's next inputs.
//
// Entity writes: after every tick the host takes writes(), checks their
// shape (entity and id non-empty, set an object) and hands them to the
// EntityWriteSink at once; the sink keeps the latest value per row and
// field and writes them every write_flush_ms and when the shard stops
// (ShardStopped). A refused write is logged on the shard's host log.
#ifndef TESSERA_SHARD_SHARD_CALLS_H_
#define TESSERA_SHARD_SHARD_CALLS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::shard {

// One keyed call of one shard run.
struct ShardCall {
  std::string shard_id;
  std::string kind;
  uint64_t run_id = 0;    // ShardInfo::run_id of the asking run
  std::string key;        // 1..abi::kMaxCallKeyBytes
  std::string function;   // as the guest wrote it
  std::string args_json;  // compact JSON (null when absent)
};

// Its outcome, for on_call_result.
struct CallResult {
  std::string key;
  bool ok = true;
  std::string result_json = "null";  // ok
  std::string error;                 // !ok: "CODE: message"
};

class CallGateway {
 public:
  virtual ~CallGateway() = default;
  // Takes the call; must not block (queue it). The gateway answers every
  // call it takes exactly once with ShardHost::DeliverCallResult, unless
  // the run has ended (then it may drop it).
  virtual void Submit(ShardCall call) = 0;
};

// One entity write: the fields of `set_json` (a JSON object) for the row.
struct EntityWrite {
  std::string entity;
  std::string id;
  std::string set_json;
};

class EntityWriteSink {
 public:
  virtual ~EntityWriteSink() = default;
  // One tick's writes of one shard (in the order the guest gave them);
  // must not block for I/O. `flush_ms` is the kind's write_flush_ms.
  virtual void Write(std::string_view shard_id, uint32_t flush_ms,
                     std::vector<EntityWrite> writes) = 0;
  // The shard stopped (any reason, Shutdown included): write what it
  // buffered now. May block until written (the host calls it on the
  // shard's worker after the last tick).
  virtual void ShardStopped(std::string_view shard_id) = 0;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_SHARD_CALLS_H_
