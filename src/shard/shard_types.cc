#include "shard/shard_types.h"

namespace tessera::shard {

const char* StopReasonName(StopReason r) {
  switch (r) {
    case StopReason::kNone:
      return "none";
    case StopReason::kStopped:
      return "stopped";
    case StopReason::kIdle:
      return "idle";
    case StopReason::kFinished:
      return "finished";
    case StopReason::kFailed:
      return "failed";
    case StopReason::kFenced:
      return "fenced";
  }
  return "unknown";
}

const char* ShardStatusName(ShardStatus s) {
  switch (s) {
    case ShardStatus::kStarting:
      return "starting";
    case ShardStatus::kRunning:
      return "running";
    case ShardStatus::kStopped:
      return "stopped";
  }
  return "unknown";
}

}  // namespace tessera::shard
