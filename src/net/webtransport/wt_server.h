// The WebTransport port: one UDP socket on one of the server's io
// contexts, and the table of QUIC connections keyed by every connection id
// they answer to (ours, and the client's original destination id, which
// its second Initial packet still carries). A new client Initial makes a
// connection (ngtcp2_accept); packets for no connection are dropped.
//
// Threading: Start, Stop and everything else on the io context's thread,
// except Start/Stop which post there and wait.
#ifndef TESSERA_NET_WEBTRANSPORT_WT_SERVER_H_
#define TESSERA_NET_WEBTRANSPORT_WT_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "net/webtransport/wt_session.h"

namespace tessera::net::wt {

class TlsIdentity;

class WtServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;  // 0: an ephemeral port
    int64_t idle_timeout_ms = 30000;
    size_t max_connections = 4096;
  };
  // `tls` and `acceptor` are not owned and must outlive the server.
  WtServer(boost::asio::io_context& ioc, Options options,
           const TlsIdentity& tls, WtAcceptor& acceptor);
  ~WtServer();

  // Binds the UDP port and starts reading (from the io thread, or before
  // it runs). Errors: kIo.
  Status Start();
  uint16_t port() const;
  // Closes every session with `code`/`reason` and the socket; call on the
  // io thread (or once it stopped).
  void Stop(uint32_t code, std::string_view reason);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_WT_SERVER_H_
