// A QUIC stream's send side for ngtcp2, which does not copy stream data:
// the bytes are kept in chunks that never move until the peer acknowledged
// them, and handed to ngtcp2 as vectors of what is not sent yet.
#ifndef TESSERA_NET_WEBTRANSPORT_SEND_BUFFER_H_
#define TESSERA_NET_WEBTRANSPORT_SEND_BUFFER_H_

#include <ngtcp2/ngtcp2.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace tessera::net::wt {

struct SendBuffer {
  std::deque<std::string> chunks;
  uint64_t base = 0;    // stream offset of chunks.front()
  uint64_t queued = 0;  // stream offset after the last chunk
  uint64_t sent = 0;    // handed to ngtcp2
  bool fin = false;     // end the stream after the queued bytes
  bool fin_sent = false;
  bool blocked = false;  // flow control; retried after the next packet

  bool Pending() const {
    return !blocked && (sent < queued || (fin && !fin_sent));
  }
  // Bytes queued and not yet acknowledged.
  size_t backlog() const { return static_cast<size_t>(queued - base); }
  void Queue(std::string bytes);
  // The unsent bytes as at most `max` vectors; returns how many.
  size_t Unsent(ngtcp2_vec* v, size_t max) const;
  // ngtcp2 took `datalen` more bytes (negative: none), and the FIN with
  // them when `fin` and nothing is left.
  void Advance(ngtcp2_ssize datalen, bool with_fin);
  // The peer acknowledged everything before stream offset `upto`.
  void Acked(uint64_t upto);
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_SEND_BUFFER_H_
