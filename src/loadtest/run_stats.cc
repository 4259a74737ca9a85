#include "loadtest/run_stats.h"

namespace tessera::loadtest {

void StatsShard::Joined() {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.bots_connected;
  ++connected_;
}

void StatsShard::ConnectFailed(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.connect_failures;
  ++totals_.connect_failure_reasons[reason];
  ++second_.errors;
}

void StatsShard::Ended(double connected_secs, const std::string& close_code) {
  std::lock_guard<std::mutex> lock(mu_);
  if (connected_ > 0) --connected_;
  totals_.bot_seconds += connected_secs;
  if (!close_code.empty()) ++totals_.disconnects[close_code];
}

void StatsShard::InputSent() {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.inputs_sent;
  ++second_.sent;
}

void StatsShard::Answered(uint64_t rtt_us, bool refused,
                          std::string_view refusal) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.rtt_us.Record(rtt_us);
  second_.rtt_us.Record(rtt_us);
  if (refused) {
    ++totals_.inputs_refused;
    ++totals_.refusals[std::string(refusal)];
    ++second_.refused;
  } else {
    ++totals_.inputs_acked;
    ++second_.acked;
  }
}

void StatsShard::AimedSent() {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.aimed.sent;
}

void StatsShard::AimedAnswered(bool refused, std::string_view refusal) {
  std::lock_guard<std::mutex> lock(mu_);
  if (refused) {
    ++totals_.aimed.refused;
    ++totals_.aimed.refusals[std::string(refusal)];
  } else {
    ++totals_.aimed.acked;
  }
}

void StatsShard::AimNotDrawn() {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.aimed.not_drawn;
}

void StatsShard::Unanswered(uint64_t inputs, bool at_end) {
  if (inputs == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  (at_end ? totals_.in_flight_at_end : totals_.inputs_lost) += inputs;
}

void StatsShard::Received(bool frame, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.bytes += bytes;
  second_.bytes += bytes;
  if (frame) {
    ++totals_.frames;
    ++second_.frames;
  }
}

void StatsShard::Error() {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.errors;
  ++second_.errors;
}

void StatsShard::Transferred(uint64_t total_us, uint64_t reconnect_us) {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.transfers.followed;
  totals_.transfers.time_us.Record(total_us);
  totals_.transfers.notice_us.Record(
      total_us > reconnect_us ? total_us - reconnect_us : 0);
  totals_.transfers.reconnect_us.Record(reconnect_us);
}

void StatsShard::TransferFailed(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++totals_.transfers.failed;
  ++totals_.transfers.failures[reason];
  ++second_.errors;
}

void StatsShard::FirstFrame(uint64_t us) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.first_frame_us.Record(us);
}

SeriesPoint StatsShard::TakeSecond() {
  std::lock_guard<std::mutex> lock(mu_);
  SeriesPoint out = std::move(second_);
  second_ = SeriesPoint();
  out.connected = connected_;
  return out;
}

Counts StatsShard::Totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

uint64_t StatsShard::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return connected_;
}

uint64_t StatsShard::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  const Counts& c = totals_;
  return c.inputs_sent - c.inputs_acked - c.inputs_refused -
         c.in_flight_at_end - c.inputs_lost;
}

void StatsShard::DoneSending() {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_sending_;
}

uint64_t StatsShard::done_sending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_sending_;
}

RunStats::RunStats(int shards) {
  for (int i = 0; i < shards; ++i) {
    shards_.push_back(std::make_unique<StatsShard>());
  }
}

SeriesPoint RunStats::TakeSecond(int64_t t) {
  SeriesPoint sum;
  for (auto& shard : shards_) sum.Add(shard->TakeSecond());
  sum.t = t;
  return sum;
}

Counts RunStats::Totals() const {
  Counts sum;
  for (const auto& shard : shards_) sum.Add(shard->Totals());
  return sum;
}

uint64_t RunStats::connected() const {
  uint64_t sum = 0;
  for (const auto& shard : shards_) sum += shard->connected();
  return sum;
}

uint64_t RunStats::in_flight() const {
  uint64_t sum = 0;
  for (const auto& shard : shards_) sum += shard->in_flight();
  return sum;
}

uint64_t RunStats::done_sending() const {
  uint64_t sum = 0;
  for (const auto& shard : shards_) sum += shard->done_sending();
  return sum;
}

}  // namespace tessera::loadtest
