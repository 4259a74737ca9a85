#include "bench/net/bot_stats.h"

#include <algorithm>
#include <cmath>

namespace tessera::bench {

void BotStats::Merge(const BotStats& other) {
  joined += other.joined;
  join_failures += other.join_failures;
  inputs_sent += other.inputs_sent;
  acks += other.acks;
  rejects += other.rejects;
  errors += other.errors;
  for (int p = 0; p < kPhaseCount; ++p) {
    frames[p] += other.frames[p];
    bytes_received[p] += other.bytes_received[p];
  }
  for (const auto& [code, count] : other.server_closes) {
    server_closes[code] += count;
  }
  rtt_us.insert(rtt_us.end(), other.rtt_us.begin(), other.rtt_us.end());
}

double PercentileMs(std::vector<uint32_t>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t rank =
      static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
  const size_t index = std::min(samples.size() - 1, rank == 0 ? 0 : rank - 1);
  return samples[index] / 1000.0;
}

}  // namespace tessera::bench
