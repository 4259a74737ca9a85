#include "net/webtransport/send_buffer.h"

namespace tessera::net::wt {

void SendBuffer::Queue(std::string bytes) {
  if (bytes.empty()) return;
  queued += bytes.size();
  chunks.push_back(std::move(bytes));
}

size_t SendBuffer::Unsent(ngtcp2_vec* v, size_t max) const {
  size_t n = 0;
  uint64_t off = base;
  for (const std::string& c : chunks) {
    const uint64_t end = off + c.size();
    if (end > sent && n < max) {
      const size_t skip = sent > off ? static_cast<size_t>(sent - off) : 0;
      v[n].base =
          reinterpret_cast<uint8_t*>(const_cast<char*>(c.data())) + skip;
      v[n].len = c.size() - skip;
      ++n;
    }
    off = end;
  }
  return n;
}

void SendBuffer::Advance(ngtcp2_ssize datalen, bool with_fin) {
  if (datalen > 0) sent += static_cast<uint64_t>(datalen);
  if (with_fin && sent == queued) fin_sent = true;
}

void SendBuffer::Acked(uint64_t upto) {
  while (!chunks.empty() && base + chunks.front().size() <= upto) {
    base += chunks.front().size();
    chunks.pop_front();
  }
}

}  // namespace tessera::net::wt
