// What leaves the shard host: frames and stop notices. The network layer
// implements this (encodes and posts to its io_context); the host knows no
// sockets.
//
// Threading: called on worker threads, concurrently for different shards,
// and in order for any one shard (frames of a shard never overlap and its
// OnStopped comes after its last OnFrame). Implementations must be quick
// (they run inside the tick loop), must not throw, and must not call back
// into the ShardHost synchronously except for the thread-safe read-only
// Get/List and SubmitInput/Stop, which only queue.
#ifndef TESSERA_SHARD_SHARD_SINK_H_
#define TESSERA_SHARD_SHARD_SINK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shard/shard_types.h"

namespace tessera::shard {

class ShardSink {
 public:
  virtual ~ShardSink() = default;
  // One tick's output: the snapshot bytes in the kind's codec (borrowed for
  // the call) and the results of the inputs applied before that tick, in
  // the order they were submitted, each with the caller's seq. `tick` counts
  // the shard's ticks from 1.
  virtual void OnFrame(std::string_view shard_id, uint64_t tick,
                       std::string_view snapshot,
                       const std::vector<InputResult>& inputs) = 0;
  // The shard stopped; `message` is the failure line (kFailed), the
  // module's reason (kFinished, may be empty) or a short description.
  virtual void OnStopped(std::string_view shard_id, StopReason reason,
                         std::string_view message) = 0;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_SHARD_SINK_H_
