// What a WebTransport session offers the code that uses it, and what that
// code hears of it (net/webtransport/quic_connection implements the first,
// net/webtransport/wt_link the second for the shard protocol).
//
// Threading: everything on the io thread of the WebTransport port.
#ifndef TESSERA_NET_WEBTRANSPORT_WT_SESSION_H_
#define TESSERA_NET_WEBTRANSPORT_WT_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tessera::net::wt {

class WtSessionIo {
 public:
  virtual ~WtSessionIo() = default;
  // The session's datagram prefix (its quarter stream id).
  virtual const std::string& datagram_prefix() const = 0;
  // The largest datagram (prefix included) that fits one packet now.
  virtual size_t max_datagram() const = 0;
  // Queues a datagram (dropped when too many wait: they are unreliable).
  virtual void SendDatagram(std::string datagram) = 0;
  // Appends to a session stream's send side; the bytes are kept until the
  // peer acknowledged them. False when the stream is gone.
  virtual bool SendOnStream(int64_t stream_id, std::string bytes) = 0;
  // Ends the stream's send side after what is queued.
  virtual void FinishStream(int64_t stream_id) = 0;
  // Bytes queued on the stream and not yet acknowledged.
  virtual size_t StreamBacklog(int64_t stream_id) const = 0;
  // Writes what waits (after a burst of Send* calls).
  virtual void Flush() = 0;
  // Ends the session: the CLOSE_WEBTRANSPORT_SESSION capsule with
  // `code`/`reason`, then the connection's close.
  virtual void CloseSession(uint32_t code, std::string_view reason) = 0;
  // The QUIC round trip (smoothed, microseconds), once measured.
  virtual std::optional<int64_t> rtt_us() const = 0;
};

class WtSessionHandler {
 public:
  virtual ~WtSessionHandler() = default;
  // The session's CONNECT was answered 200: it is open.
  virtual void OnOpen(WtSessionIo& io) = 0;
  // Bytes on a bidirectional stream of the session (after its signal and
  // session id); `fin`: the client finished the stream.
  virtual void OnStreamData(int64_t stream_id, std::span<const uint8_t> bytes,
                            bool fin) = 0;
  // A datagram's payload (after the prefix).
  virtual void OnDatagram(std::span<const uint8_t> payload) = 0;
  // The session is over (closed by either side, or the connection ended);
  // the WtSessionIo is gone after this call. Once.
  virtual void OnEnd() = 0;
};

// What answers a CONNECT: a handler for the session at `path` (already
// checked to be an extended CONNECT for webtransport), or null (404).
class WtAcceptor {
 public:
  virtual ~WtAcceptor() = default;
  virtual std::unique_ptr<WtSessionHandler> Accept(
      std::string_view path, std::string_view peer_ip) = 0;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_WT_SESSION_H_
