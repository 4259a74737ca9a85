// LifecycleSink: the ShardSink the host reports to. Frames pass straight
// to the downstream sink (the net::Server); a stop is forwarded too, then
// counted (ShardEventMetrics), logged as one line ("shard c1 (counter)
// stopped (failed): panic: boom", the message escaped), the directory
// forgets the shard and, when the kind has an http:// onStop URL,
// {"shardId", "kind", "reason", "error"} is queued for it (error is the
// failure line for reason "failed", else null).
//
// Threading: the ShardSink methods run on shard workers (see shard_sink.h).
// SetDownstream may be called from any thread at any time (frames are
// dropped while there is none). Attach must happen before the host starts
// its first shard (the host and the directory refer to each other, so one
// of them is wired after construction). Ownership: nothing is owned;
// `directory` and `notifier` must outlive the host that reports here.
#ifndef TESSERA_SERVER_LIFECYCLE_SINK_H_
#define TESSERA_SERVER_LIFECYCLE_SINK_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "server/host_metrics.h"
#include "server/shard_directory.h"
#include "server/stop_notifier.h"
#include "shard/shard_sink.h"

namespace tessera::server {

// How long the server keeps a failed shard listed with its failure line
// (HostOptions::failed_retention_us; GET /api/shards/<id>); other stopped
// shards go after HostOptions::stopped_retention_us (5 s).
inline constexpr int64_t kFailedRetentionUs = 300'000'000;

// The onStop body for one stop (compact JSON).
std::string StopNoticeBody(std::string_view shard_id, std::string_view kind,
                           shard::StopReason reason, std::string_view message);

// The server log line for one stop (no newline): "shard <id> (<kind>)
// stopped (<reason>): <message>", the message cut and escaped (it may be
// guest text); "(<kind>) " is left out when the kind is unknown.
std::string StopLogLine(std::string_view shard_id, std::string_view kind,
                        shard::StopReason reason, std::string_view message);

struct LifecycleOptions {
  // Receives one line per stop (StopLogLine), on the worker: must not
  // block. Null: not logged.
  std::function<void(const std::string&)> log;
  // Counts stops and failures by reason. Null: not counted.
  ShardEventMetrics* metrics = nullptr;
};

class LifecycleSink final : public shard::ShardSink {
 public:
  // `notifier` may be null (no notifications).
  explicit LifecycleSink(StopNotifier* notifier, LifecycleOptions options = {})
      : notifier_(notifier), options_(std::move(options)) {}

  // Not thread-safe; see the file comment.
  void Attach(ShardDirectory* directory) { directory_ = directory; }

  void SetDownstream(shard::ShardSink* downstream) {
    downstream_.store(downstream, std::memory_order_release);
  }

  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<shard::InputResult>& inputs) override;
  void OnViews(std::string_view shard_id,
               std::shared_ptr<const shard::ViewFrame> frame) override;
  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view message) override;

 private:
  ShardDirectory* directory_ = nullptr;
  StopNotifier* const notifier_;
  const LifecycleOptions options_;
  std::atomic<shard::ShardSink*> downstream_{nullptr};
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_LIFECYCLE_SINK_H_
