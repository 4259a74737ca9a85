// A tick's FRAME as WebTransport datagrams (pure): the message is cut into
// chunks that each fit one datagram, and every chunk says which tick it
// belongs to, how many chunks that tick has and which one it is:
//
//   varint tick | varint count | varint index | chunk bytes
//
// so a client applies a tick only when it holds all of it, and a lost
// datagram loses its tick, never corrupts one. The reassembler is what a
// client does (the tests and tools use it; the browser has its own).
#ifndef TESSERA_NET_WEBTRANSPORT_TICK_DATAGRAMS_H_
#define TESSERA_NET_WEBTRANSPORT_TICK_DATAGRAMS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::net::wt {

// More chunks than this: the tick goes on the stream instead.
inline constexpr size_t kMaxTickChunks = 64;

// The datagrams of `message` (given as parts, concatenated) for `tick`,
// each at most `max_datagram` bytes after `prefix` (the session's datagram
// prefix, put in front of each). Empty when the message needs more than
// kMaxTickChunks datagrams or `max_datagram` leaves no room for a chunk.
std::vector<std::string> SplitTick(uint64_t tick,
                                   std::span<const std::string_view> parts,
                                   std::string_view prefix,
                                   size_t max_datagram);

class TickReassembler {
 public:
  // At most `max_pending` ticks are collected at once (older ones give
  // way); a tick's message may be at most `max_message_bytes`.
  explicit TickReassembler(size_t max_pending = 4,
                           size_t max_message_bytes = 1 << 20);

  enum class Outcome {
    kPartial,    // kept; the tick is not whole yet
    kWhole,      // the tick is whole: `message`
    kStale,      // a tick at or before the newest whole one, or a repeat
    kMalformed,  // header cut short, index >= count, count out of range,
                 // a count unlike the tick's other chunks, or too large
  };
  struct Added {
    Outcome outcome = Outcome::kPartial;
    uint64_t tick = 0;
    std::string message;  // with kWhole
  };
  // One datagram's payload (after the session prefix).
  Added Add(std::span<const uint8_t> datagram);

  // The newest tick made whole, if any.
  bool has_whole() const { return has_whole_; }
  uint64_t last_whole() const { return last_whole_; }
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    size_t count = 0;
    size_t have = 0;
    size_t bytes = 0;
    std::vector<std::string> chunks;
    std::vector<bool> got;
  };
  const size_t max_pending_;
  const size_t max_message_bytes_;
  std::map<uint64_t, Pending> pending_;
  bool has_whole_ = false;
  uint64_t last_whole_ = 0;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_TICK_DATAGRAMS_H_
