#include "net/webtransport/tick_datagrams.h"

#include <algorithm>

#include "net/webtransport/wt_wire.h"

namespace tessera::net::wt {

std::vector<std::string> SplitTick(uint64_t tick,
                                   std::span<const std::string_view> parts,
                                   std::string_view prefix,
                                   size_t max_datagram) {
  size_t total = 0;
  for (std::string_view p : parts) total += p.size();
  // The header's size with the largest index and count (one byte each up
  // to 63 chunks, two beyond: kMaxTickChunks is 64).
  const size_t header =
      prefix.size() + VarintSize(tick) + 2 * VarintSize(kMaxTickChunks);
  if (max_datagram <= header) return {};
  const size_t room = max_datagram - header;
  const size_t count = std::max<size_t>(1, (total + room - 1) / room);
  if (count > kMaxTickChunks) return {};
  std::vector<std::string> out(count);
  size_t part = 0;
  size_t offset = 0;  // within parts[part]
  for (size_t i = 0; i < count; ++i) {
    std::string& d = out[i];
    d.reserve(max_datagram);
    d.append(prefix);
    AppendVarint(d, tick);
    AppendVarint(d, count);
    AppendVarint(d, i);
    size_t want = std::min(room, total - i * room);
    while (want > 0 && part < parts.size()) {
      const size_t take = std::min(want, parts[part].size() - offset);
      d.append(parts[part].substr(offset, take));
      want -= take;
      offset += take;
      if (offset == parts[part].size()) {
        ++part;
        offset = 0;
      }
    }
  }
  return out;
}

TickReassembler::TickReassembler(size_t max_pending, size_t max_message_bytes)
    : max_pending_(std::max<size_t>(1, max_pending)),
      max_message_bytes_(max_message_bytes) {}

TickReassembler::Added TickReassembler::Add(std::span<const uint8_t> datagram) {
  Added out;
  Reader r(datagram);
  uint64_t tick = 0;
  uint64_t count = 0;
  uint64_t index = 0;
  if (!r.Varint(&tick) || !r.Varint(&count) || !r.Varint(&index) ||
      count == 0 || count > kMaxTickChunks || index >= count) {
    out.outcome = Outcome::kMalformed;
    return out;
  }
  out.tick = tick;
  if (has_whole_ && tick <= last_whole_) {
    out.outcome = Outcome::kStale;
    return out;
  }
  auto it = pending_.find(tick);
  if (it == pending_.end()) {
    // Room for a new tick: the oldest collected gives way; a tick older
    // than every one collected while full is not worth starting.
    if (pending_.size() >= max_pending_) {
      if (tick < pending_.begin()->first) {
        out.outcome = Outcome::kStale;
        return out;
      }
      pending_.erase(pending_.begin());
    }
    Pending p;
    p.count = static_cast<size_t>(count);
    p.chunks.resize(p.count);
    p.got.assign(p.count, false);
    it = pending_.emplace(tick, std::move(p)).first;
  }
  Pending& p = it->second;
  if (p.count != count) {
    pending_.erase(it);
    out.outcome = Outcome::kMalformed;
    return out;
  }
  if (p.got[index]) {
    out.outcome = Outcome::kStale;
    return out;
  }
  std::span<const uint8_t> chunk = r.rest();
  if (p.bytes + chunk.size() > max_message_bytes_) {
    pending_.erase(it);
    out.outcome = Outcome::kMalformed;
    return out;
  }
  p.chunks[index].assign(reinterpret_cast<const char*>(chunk.data()),
                         chunk.size());
  p.got[index] = true;
  p.bytes += chunk.size();
  if (++p.have < p.count) {
    out.outcome = Outcome::kPartial;
    return out;
  }
  out.message.reserve(p.bytes);
  for (const std::string& c : p.chunks) out.message += c;
  // This tick and every older one are done with.
  pending_.erase(pending_.begin(), std::next(it));
  has_whole_ = true;
  last_whole_ = tick;
  out.outcome = Outcome::kWhole;
  return out;
}

}  // namespace tessera::net::wt
