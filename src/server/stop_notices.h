// The server's observers of the shard host (registered on the host's
// shard::ShardObservers by the composition root, see app_server.h):
// - ForgetStopped: the directory forgets a shard that stopped;
// - StopNotices: when the stopped shard's kind has an http:// onStop URL,
//   {"shardId", "kind", "reason", "error"} is queued on the StopNotifier
//   (error is the failure line for reason "failed", else null).
// Register ForgetStopped before StopNotices (and the network's fan-out
// first), which is the order the old single sink had.
//
// Threading: the ShardSink methods run on shard workers (see shard_sink.h).
// Ownership: nothing is owned; what they refer to must outlive the host
// that reports to them.
#ifndef TESSERA_SERVER_STOP_NOTICES_H_
#define TESSERA_SERVER_STOP_NOTICES_H_

#include <string>
#include <string_view>
#include <vector>

#include "server/shard_directory.h"
#include "server/stop_notifier.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/shard_sink.h"

namespace tessera::server {

// The onStop body for one stop (compact JSON).
std::string StopNoticeBody(std::string_view shard_id, std::string_view kind,
                           shard::StopReason reason, std::string_view message);

// Frames are ignored; a stop makes `directory` forget the shard.
class ForgetStopped final : public shard::ShardSink {
 public:
  explicit ForgetStopped(ShardDirectory& directory) : directory_(directory) {}

  void OnFrame(std::string_view, uint64_t, std::string_view,
               const std::vector<shard::InputResult>&) override {}
  void OnViews(std::string_view,
               std::shared_ptr<const shard::ViewFrame>) override {}
  void OnStopped(std::string_view shard_id, shard::StopReason,
                 std::string_view) override {
    directory_.OnStopped(shard_id);
  }

 private:
  ShardDirectory& directory_;
};

// Frames are ignored; a stop queues the kind's onStop notice (see the file
// comment).
class StopNotices final : public shard::ShardSink {
 public:
  StopNotices(const shard::ShardHost& host, const shard::KindRegistry& kinds,
              StopNotifier& notifier)
      : host_(host), kinds_(kinds), notifier_(notifier) {}

  void OnFrame(std::string_view, uint64_t, std::string_view,
               const std::vector<shard::InputResult>&) override {}
  void OnViews(std::string_view,
               std::shared_ptr<const shard::ViewFrame>) override {}
  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view message) override;

 private:
  const shard::ShardHost& host_;
  const shard::KindRegistry& kinds_;
  StopNotifier& notifier_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_STOP_NOTICES_H_
