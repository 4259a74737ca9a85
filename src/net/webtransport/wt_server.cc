#include "net/webtransport/wt_server.h"

#include <ngtcp2/ngtcp2.h>

#include <array>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <unordered_map>

#include "net/webtransport/quic_connection.h"

namespace tessera::net::wt {

namespace asio = boost::asio;
using udp = asio::ip::udp;

namespace {
constexpr size_t kOurCidLen = 18;  // as QuicConnection makes them
}  // namespace

struct WtServer::Impl {
  Impl(asio::io_context& io, Options o, const TlsIdentity& t, WtAcceptor& a)
      : ioc(io), options(std::move(o)), tls(t), acceptor(a), socket(io) {}

  void Receive() {
    socket.async_receive_from(
        asio::buffer(buf), from,
        [this](boost::system::error_code ec, size_t n) {
          if (ec == asio::error::operation_aborted || !socket.is_open()) return;
          if (!ec) OnDatagram({buf.data(), n});
          Receive();
        });
  }

  void OnDatagram(std::span<const uint8_t> pkt) {
    ngtcp2_version_cid vc;
    if (ngtcp2_pkt_decode_version_cid(&vc, pkt.data(), pkt.size(),
                                      kOurCidLen) != 0) {
      return;  // garbage, or a version we do not speak
    }
    const std::string dcid(reinterpret_cast<const char*>(vc.dcid), vc.dcidlen);
    auto it = by_cid.find(dcid);
    if (it != by_cid.end()) {
      it->second->OnPacket(pkt, from);
      return;
    }
    ngtcp2_pkt_hd hd;
    if (ngtcp2_accept(&hd, pkt.data(), pkt.size()) != 0) return;
    if (conns.size() >= options.max_connections || stopping) return;
    std::string error;
    std::unique_ptr<QuicConnection> conn =
        QuicConnection::Accept(env, hd, from, &error);
    if (!conn) return;
    QuicConnection* raw = conn.get();
    conns.emplace(raw, std::move(conn));
    raw->OnPacket(pkt, from);
  }

  asio::io_context& ioc;
  const Options options;
  const TlsIdentity& tls;
  WtAcceptor& acceptor;
  udp::socket socket;
  udp::endpoint from;
  std::array<uint8_t, 65536> buf;
  QuicConnection::Env env;
  std::unordered_map<std::string, QuicConnection*> by_cid;
  std::unordered_map<QuicConnection*, std::unique_ptr<QuicConnection>> conns;
  uint16_t port = 0;
  bool stopping = false;
};

WtServer::WtServer(asio::io_context& ioc, Options options,
                   const TlsIdentity& tls, WtAcceptor& acceptor)
    : impl_(std::make_unique<Impl>(ioc, std::move(options), tls, acceptor)) {}

WtServer::~WtServer() {
  // Connections first: their destructors take their ids out of the table.
  impl_->conns.clear();
}

Status WtServer::Start() {
  Impl& im = *impl_;
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(im.options.host, ec);
  const std::string where =
      im.options.host + ":" + std::to_string(im.options.port) + "/udp";
  if (ec) return IoError("bad WebTransport address " + where);
  const udp::endpoint endpoint(address, im.options.port);
  if (im.socket.open(endpoint.protocol(), ec) || im.socket.bind(endpoint, ec) ||
      im.socket.non_blocking(true, ec)) {
    return IoError("cannot bind " + where + ": " + ec.message());
  }
  im.env.local = im.socket.local_endpoint(ec);
  im.port = im.env.local.port();
  im.env.socket = &im.socket;
  im.env.tls = &im.tls;
  im.env.acceptor = &im.acceptor;
  im.env.idle_timeout_ms = im.options.idle_timeout_ms;
  im.env.add_cid = [&im](const std::string& cid, QuicConnection* c) {
    im.by_cid[cid] = c;
  };
  im.env.remove_cid = [&im](const std::string& cid) { im.by_cid.erase(cid); };
  im.env.on_dead = [&im](QuicConnection* c) {
    asio::post(im.ioc, [&im, c] { im.conns.erase(c); });
  };
  im.Receive();
  return Status::Ok();
}

uint16_t WtServer::port() const { return impl_->port; }

void WtServer::Stop(uint32_t code, std::string_view reason) {
  Impl& im = *impl_;
  im.stopping = true;
  for (auto& [raw, conn] : im.conns) conn->Shutdown(code, reason);
  boost::system::error_code ec;
  im.socket.close(ec);
}

}  // namespace tessera::net::wt
