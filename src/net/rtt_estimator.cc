#include "net/rtt_estimator.h"

#include <algorithm>
#include <charconv>

namespace tessera::net {
namespace {

// "rtt:" and the ping's id in decimal: recognisably ours in a packet dump.
constexpr std::string_view kPrefix = "rtt:";

std::optional<uint64_t> ParseId(std::string_view payload) {
  if (!payload.starts_with(kPrefix)) return std::nullopt;
  payload.remove_prefix(kPrefix.size());
  // Exactly the digits NextPing writes: no sign, no leading zero, no tail.
  if (payload.empty() || payload.size() > 20 || payload.front() == '0') {
    return std::nullopt;
  }
  uint64_t id = 0;
  const char* end = payload.data() + payload.size();
  auto [ptr, ec] = std::from_chars(payload.data(), end, id);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return id;
}

}  // namespace

std::string RttEstimator::NextPing() {
  const uint64_t id = next_id_++;
  if (outstanding_.size() == kMaxOutstanding) outstanding_.pop_front();
  outstanding_.push_back({id, clock_.NowUs()});
  return std::string(kPrefix) + std::to_string(id);
}

std::optional<int64_t> RttEstimator::OnPong(std::string_view payload) {
  const std::optional<uint64_t> id = ParseId(payload);
  if (!id) return std::nullopt;
  auto it = std::find_if(outstanding_.begin(), outstanding_.end(),
                         [&](const Sent& s) { return s.id == *id; });
  if (it == outstanding_.end()) return std::nullopt;
  // A clock is monotonic; never a negative sample all the same.
  const int64_t sample = std::max<int64_t>(clock_.NowUs() - it->at_us, 0);
  outstanding_.erase(outstanding_.begin(), it + 1);
  if (!srtt_us_) {
    srtt_us_ = sample;
  } else {
    *srtt_us_ += (sample - *srtt_us_) / 8;
  }
  return sample;
}

}  // namespace tessera::net
