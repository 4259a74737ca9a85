// LifecycleSink: the ShardSink the host reports to. Frames pass straight
// to the downstream sink (the net::Server); a stop is forwarded too, then
// the directory forgets the shard and, when the kind has an http:// onStop
// URL, {"shardId", "kind", "reason", "error"} is queued for it (error is
// the failure line for reason "failed", else null).
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
#include <string>

#include "server/shard_directory.h"
#include "server/stop_notifier.h"
#include "shard/shard_sink.h"

namespace tessera::server {

// The onStop body for one stop (compact JSON).
std::string StopNoticeBody(std::string_view shard_id, std::string_view kind,
                           shard::StopReason reason, std::string_view message);

class LifecycleSink final : public shard::ShardSink {
 public:
  // `notifier` may be null (no notifications).
  explicit LifecycleSink(StopNotifier* notifier) : notifier_(notifier) {}

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
  std::atomic<shard::ShardSink*> downstream_{nullptr};
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_LIFECYCLE_SINK_H_
