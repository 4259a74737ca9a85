// The server's observers of the shard host (registered on the host's
// shard::ShardObservers by the composition root, see app_server.h):
// - ForgetStopped: the directory forgets a shard that stopped;
// - StopNotices: when the stopped shard's kind has an http(s):// onStop URL,
//   {"shardId", "kind", "reason", "error"} is queued on the StopNotifier
//   (error is the failure line for reason "failed", else null);
// - StopLog: every stop is counted (ShardEventMetrics) and logged as one
//   line ("shard c1 (counter) stopped (failed): panic: boom", escaped).
// Register ForgetStopped before StopNotices (and the network's fan-out
// first), which is the order the old single sink had.
//
// Threading: the ShardSink methods run on shard workers (see shard_sink.h).
// Ownership: nothing is owned; what they refer to must outlive the host
// that reports to them.
#ifndef TESSERA_SERVER_STOP_NOTICES_H_
#define TESSERA_SERVER_STOP_NOTICES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "server/host_metrics.h"
#include "server/shard_directory.h"
#include "server/stop_notifier.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/shard_sink.h"

namespace tessera::server {

// How long the server keeps a failed shard listed with its failure line
// (HostOptions::failed_retention_us; GET /api/shards/<id>); other stopped
// shards go after HostOptions::stopped_retention_us (5 s).
inline constexpr int64_t kFailedRetentionUs = 300'000'000;

// Whether a kind's on_stop names a webhook (StopNotices: http:// or
// https://) rather than a function (StopFunctions, stop_functions.h).
bool IsStopUrl(std::string_view on_stop);

// The server log line for one stop (no newline): "shard <id> (<kind>)
// stopped (<reason>): <message>", the message cut and escaped (it may be
// guest text); "(<kind>) " is left out when the kind is unknown.
std::string StopLogLine(std::string_view shard_id, std::string_view kind,
                        shard::StopReason reason, std::string_view message);

// The onStop body for one stop (compact JSON).
std::string StopNoticeBody(std::string_view shard_id, std::string_view kind,
                           shard::StopReason reason, std::string_view message);

// An observer of stops only: frames and views are ignored.
class StopObserver : public shard::ShardSink {
 public:
  void OnFrame(std::string_view, uint64_t, std::string_view,
               const std::vector<shard::InputResult>&) final {}
  void OnViews(std::string_view,
               std::shared_ptr<const shard::ViewFrame>) final {}
};

// A stop makes `directory` forget the shard.
class ForgetStopped final : public StopObserver {
 public:
  explicit ForgetStopped(ShardDirectory& directory) : directory_(directory) {}

  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view) override {
    if (shard::StoppedForGood(reason)) directory_.OnStopped(shard_id);
  }

 private:
  ShardDirectory& directory_;
};

// A stop queues the kind's onStop notice (see the file comment).
class StopNotices final : public StopObserver {
 public:
  StopNotices(const shard::ShardHost& host, const shard::KindRegistry& kinds,
              StopNotifier& notifier)
      : host_(host), kinds_(kinds), notifier_(notifier) {}

  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view message) override;

 private:
  const shard::ShardHost& host_;
  const shard::KindRegistry& kinds_;
  StopNotifier& notifier_;
};

// A stop is counted and logged (see the file comment).
class StopLog final : public StopObserver {
 public:
  // `log` receives one line per stop on the worker and must not block (null:
  // not logged); `metrics` may be null (not counted).
  StopLog(const shard::ShardHost& host,
          std::function<void(const std::string&)> log,
          ShardEventMetrics* metrics)
      : host_(host), log_(std::move(log)), metrics_(metrics) {}

  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view message) override;

 private:
  const shard::ShardHost& host_;
  const std::function<void(const std::string&)> log_;
  ShardEventMetrics* const metrics_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_STOP_NOTICES_H_
