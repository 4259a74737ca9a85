// What the bots of a run observe, gathered while it runs: the totals for
// the report and the figures of the current second, which the driver takes
// once a second for the time series and the progress line.
//
// Threading: the bots of one io thread share one StatsShard (so its mutex
// is almost never contended); the driver reads every shard from its own
// thread. All methods are thread-safe.
#ifndef TESSERA_LOADTEST_RUN_STATS_H_
#define TESSERA_LOADTEST_RUN_STATS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "loadtest/report.h"

namespace tessera::loadtest {

class StatsShard {
 public:
  void Joined();
  void ConnectFailed(const std::string& reason);
  // A joined bot's connection ended after `connected_secs`; `close_code`
  // is the server's ("1006" when it ended without a close frame), or empty
  // when the bench closed it.
  void Ended(double connected_secs, const std::string& close_code);
  void InputSent();
  // An ACK (refusal empty) or REJECT with its text.
  void Answered(uint64_t rtt_us, bool refused, std::string_view refusal);
  // Inputs left unanswered when the connection ended: `at_end` when the
  // bench closed it, else lost.
  void Unanswered(uint64_t inputs, bool at_end);
  void Received(bool frame, size_t bytes);
  // --aim: an aimed input sent, its answer, a sending time skipped.
  void AimedSent();
  void AimedAnswered(bool refused, std::string_view refusal);
  void AimNotDrawn();
  void Error();
  // A move followed to the target's first FRAME, with its times
  // (TransferTracker::Move), or one that failed.
  void Transferred(uint64_t total_us, uint64_t reconnect_us);
  void TransferFailed(const std::string& reason);
  // A bot's first connection got its first FRAME `us` after the connect.
  void FirstFrame(uint64_t us);
  // A bot will send no more inputs (it sent its last, or it ended).
  void DoneSending();

  // The current second's figures (and resets them); `connected` is set.
  SeriesPoint TakeSecond();
  Counts Totals() const;
  uint64_t connected() const;
  // Inputs sent and not yet answered, lost or given up.
  uint64_t in_flight() const;
  uint64_t done_sending() const;

 private:
  mutable std::mutex mu_;
  Counts totals_;
  SeriesPoint second_;
  uint64_t connected_ = 0;
  uint64_t done_sending_ = 0;
};

// The shards of a run, one per io thread.
class RunStats {
 public:
  explicit RunStats(int shards);
  StatsShard* shard(int i) { return shards_[i].get(); }

  // Sums of every shard.
  SeriesPoint TakeSecond(int64_t t);
  Counts Totals() const;
  uint64_t connected() const;
  uint64_t in_flight() const;
  uint64_t done_sending() const;

 private:
  std::vector<std::unique_ptr<StatsShard>> shards_;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_RUN_STATS_H_
