// One QUIC connection of the WebTransport port (ngtcp2 0.12 with GnuTLS)
// and the small part of HTTP/3 tessera speaks on it: our control stream's
// SETTINGS (wt_wire.h), one extended CONNECT answered with QPACK-encoded
// headers (nghttp3's QPACK only, no dynamic table), the session's capsules
// (CLOSE_WEBTRANSPORT_SESSION; others skipped), its bidirectional streams
// and its datagrams. One session per connection. Implements WtSessionIo for
// the session's WtSessionHandler.
//
// Send buffers: ngtcp2 does not copy stream data, so each stream keeps its
// bytes (in chunks that never move) until the peer acknowledged them.
// Flow-control credit for received bytes is returned as they are consumed.
//
// Threading: everything on the WebTransport port's io thread; no writes
// from inside ngtcp2's callbacks (a Flush there only marks the write due).
#ifndef TESSERA_NET_WEBTRANSPORT_QUIC_CONNECTION_H_
#define TESSERA_NET_WEBTRANSPORT_QUIC_CONNECTION_H_

#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "net/webtransport/wt_session.h"

struct ngtcp2_pkt_hd;

namespace tessera::net::wt {

class TlsIdentity;

class QuicConnection final : public WtSessionIo {
  struct Impl;

 public:
  // What a connection needs of the port. Outlives the connection.
  struct Env {
    boost::asio::ip::udp::socket* socket = nullptr;
    const TlsIdentity* tls = nullptr;
    WtAcceptor* acceptor = nullptr;
    boost::asio::ip::udp::endpoint local;
    // The port's connection-id table (raw id bytes).
    std::function<void(const std::string& cid, QuicConnection* conn)> add_cid;
    std::function<void(const std::string& cid)> remove_cid;
    // The connection is over: the port deletes it (later, not inside the
    // call).
    std::function<void(QuicConnection* conn)> on_dead;
    int64_t idle_timeout_ms = 30000;
  };

  // A connection for the client Initial `hd` (from ngtcp2_accept) sent
  // from `remote`; null when ngtcp2 or GnuTLS refuses (`error` says why).
  static std::unique_ptr<QuicConnection> Accept(
      const Env& env, const ngtcp2_pkt_hd& hd,
      const boost::asio::ip::udp::endpoint& remote, std::string* error);
  ~QuicConnection() override;

  // A packet for this connection.
  void OnPacket(std::span<const uint8_t> packet,
                const boost::asio::ip::udp::endpoint& remote);
  // The server stops: close the session and the connection now.
  void Shutdown(uint32_t code, std::string_view reason);

  // WtSessionIo
  const std::string& datagram_prefix() const override;
  size_t max_datagram() const override;
  void SendDatagram(std::string datagram) override;
  bool SendOnStream(int64_t stream_id, std::string bytes) override;
  void FinishStream(int64_t stream_id) override;
  size_t StreamBacklog(int64_t stream_id) const override;
  void Flush() override;
  void CloseSession(uint32_t code, std::string_view reason) override;
  std::optional<int64_t> rtt_us() const override;

 private:
  explicit QuicConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_QUIC_CONNECTION_H_
