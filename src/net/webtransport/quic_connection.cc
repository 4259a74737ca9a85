#include "net/webtransport/quic_connection.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <array>
#include <boost/asio/post.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <vector>

#include "net/webtransport/dev_cert.h"
#include "net/webtransport/h3_request.h"
#include "net/webtransport/quic_setup.h"
#include "net/webtransport/send_buffer.h"
#include "net/webtransport/wt_wire.h"

namespace tessera::net::wt {
namespace {

namespace asio = boost::asio;
using udp = asio::ip::udp;

constexpr size_t kCidLen = 18;
constexpr size_t kMaxPacket = 1452;
constexpr size_t kMaxQueuedDatagrams = 256;
constexpr uint64_t kH3NoError = 0x100;
constexpr uint64_t kH3StreamCreationError = 0x103;

ngtcp2_tstamp Now() {
  return static_cast<ngtcp2_tstamp>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::string CidKey(const uint8_t* data, size_t len) {
  return std::string(reinterpret_cast<const char*>(data), len);
}

// The path of the port's address and the peer's (ngtcp2 keeps no pointer).
ngtcp2_path Path(const udp::endpoint& local, const udp::endpoint& remote) {
  ngtcp2_path path{};
  path.local.addr = const_cast<ngtcp2_sockaddr*>(
      reinterpret_cast<const ngtcp2_sockaddr*>(local.data()));
  path.local.addrlen = static_cast<ngtcp2_socklen>(local.size());
  path.remote.addr = const_cast<ngtcp2_sockaddr*>(
      reinterpret_cast<const ngtcp2_sockaddr*>(remote.data()));
  path.remote.addrlen = static_cast<ngtcp2_socklen>(remote.size());
  return path;
}

void Random(uint8_t* dest, size_t len) {
  (void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, len);
}

enum class Kind { kNew, kRequest, kSession, kIgnored, kOwnUni };

struct Stream {
  Kind kind = Kind::kNew;
  std::string head;  // bytes before the kind is known
  H3RequestStream request;
  SendBuffer send;
};

}  // namespace

struct QuicConnection::Impl {
  explicit Impl(const Env& e) : env(e), timer(env.socket->get_executor()) {}

  ~Impl() {
    for (const std::string& cid : cids) env.remove_cid(cid);
    if (conn != nullptr) ngtcp2_conn_del(conn);
    if (tls != nullptr) gnutls_deinit(tls);
  }

  Env env;
  QuicConnection* self = nullptr;
  ngtcp2_conn* conn = nullptr;
  gnutls_session_t tls = nullptr;
  ngtcp2_crypto_conn_ref conn_ref{};
  udp::endpoint remote;
  std::vector<std::string> cids;
  asio::steady_timer timer;
  std::map<int64_t, Stream> streams;
  std::deque<std::string> datagrams;
  H3Codec codec;
  bool in_callback = false;  // inside ngtcp2_conn_read_pkt
  bool write_due = false;
  bool closing = false;  // connection close sent, or draining
  bool dead = false;
  // The session.
  int64_t session_stream = -1;
  std::string prefix;
  std::unique_ptr<WtSessionHandler> handler;
  bool session_over = false;
  // After our close capsule: the client closes the connection once it
  // has seen it; if it does not, this closes it (a close that overtakes
  // the capsule would read "connection lost" in the browser).
  asio::steady_timer linger{timer.get_executor()};

  // ---- ngtcp2 callbacks ----
  static Impl& Of(void* user_data) { return *static_cast<Impl*>(user_data); }

  static int OnRecvStreamData(ngtcp2_conn*, uint32_t flags, int64_t id,
                              uint64_t, const uint8_t* data, size_t len,
                              void* ud, void*) {
    Impl& im = Of(ud);
    im.Received(id, {data, len}, (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0);
    ngtcp2_conn_extend_max_stream_offset(im.conn, id, len);
    ngtcp2_conn_extend_max_offset(im.conn, len);
    return 0;
  }
  static int OnAcked(ngtcp2_conn*, int64_t id, uint64_t offset, uint64_t len,
                     void* ud, void*) {
    Of(ud).Acked(id, offset + len);
    return 0;
  }
  static int OnStreamClose(ngtcp2_conn* c, uint32_t, int64_t id, uint64_t,
                           void* ud, void*) {
    Impl& im = Of(ud);
    if (id == im.session_stream) im.EndSession();
    im.streams.erase(id);
    // Credit for another stream of the same kind (not automatic in 0.12).
    if (!ngtcp2_is_bidi_stream(id)) {
      if ((id & 1) == 0) ngtcp2_conn_extend_max_streams_uni(c, 1);
    } else if ((id & 1) == 0) {
      ngtcp2_conn_extend_max_streams_bidi(c, 1);
    }
    return 0;
  }
  static int OnDatagram(ngtcp2_conn*, uint32_t, const uint8_t* data, size_t len,
                        void* ud) {
    Impl& im = Of(ud);
    Result<Datagram> d = ParseDatagram({data, len});
    if (d.ok() && im.handler && !im.session_over &&
        static_cast<int64_t>(d.value().session_id) == im.session_stream) {
      im.handler->OnDatagram(d.value().payload);
    }
    return 0;
  }
  static int OnHandshakeCompleted(ngtcp2_conn*, void* ud) {
    Of(ud).OpenOwnStreams();
    return 0;
  }
  static void OnRand(uint8_t* dest, size_t len, const ngtcp2_rand_ctx*) {
    Random(dest, len);
  }
  static int OnNewCid(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token,
                      size_t cidlen, void* ud) {
    Impl& im = Of(ud);
    Random(cid->data, cidlen);
    cid->datalen = cidlen;
    Random(token, NGTCP2_STATELESS_RESET_TOKENLEN);
    im.AddCid(CidKey(cid->data, cid->datalen));
    return 0;
  }
  static int OnRemoveCid(ngtcp2_conn*, const ngtcp2_cid* cid, void* ud) {
    Impl& im = Of(ud);
    const std::string key = CidKey(cid->data, cid->datalen);
    im.env.remove_cid(key);
    std::erase(im.cids, key);
    return 0;
  }
  static int OnExtendStreamData(ngtcp2_conn*, int64_t id, uint64_t, void* ud,
                                void*) {
    Impl& im = Of(ud);
    auto it = im.streams.find(id);
    if (it != im.streams.end()) it->second.send.blocked = false;
    return 0;
  }
  static ngtcp2_conn* GetConn(ngtcp2_crypto_conn_ref* ref) {
    return static_cast<Impl*>(ref->user_data)->conn;
  }

  void AddCid(std::string key) {
    env.add_cid(key, self);
    cids.push_back(std::move(key));
  }

  // ---- Streams in ----

  void Received(int64_t id, std::span<const uint8_t> data, bool fin) {
    Stream& s = streams[id];
    if (s.kind == Kind::kNew) {
      if (!ngtcp2_is_bidi_stream(id)) {
        // The peer's control and QPACK streams: nothing of them is needed
        // (no dynamic table; their SETTINGS change nothing we send).
        s.kind = Kind::kIgnored;
        return;
      }
      s.head.append(reinterpret_cast<const char*>(data.data()), data.size());
      std::span<const uint8_t> head(
          reinterpret_cast<const uint8_t*>(s.head.data()), s.head.size());
      std::optional<BidiStart> start = ParseBidiStart(head);
      if (!start) return;
      std::string held = std::move(s.head);
      if (!start->webtransport) {
        s.kind = Kind::kRequest;
        RequestBytes(id, s, AsSpan(held), fin);
        return;
      }
      if (static_cast<int64_t>(start->session_id) != session_stream ||
          !handler || session_over) {
        s.kind = Kind::kIgnored;
        ngtcp2_conn_shutdown_stream(conn, id, kH3StreamCreationError);
        return;
      }
      s.kind = Kind::kSession;
      handler->OnStreamData(id, AsSpan(held).subspan(start->consumed), fin);
      return;
    }
    if (s.kind == Kind::kRequest) {
      RequestBytes(id, s, data, fin);
    } else if (s.kind == Kind::kSession && handler && !session_over) {
      handler->OnStreamData(id, data, fin);
    }
  }

  static std::span<const uint8_t> AsSpan(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
  }

  void RequestBytes(int64_t id, Stream& s, std::span<const uint8_t> data,
                    bool fin) {
    H3RequestStream::Events ev = s.request.Feed(codec, data);
    if (ev.headers) Connect(id, *ev.headers);
    if (!ev.error.empty() || ev.close || fin) {
      if (id == session_stream) EndSession();
      if (!ev.error.empty()) {
        ngtcp2_conn_shutdown_stream(conn, id, ev.error_code);
      }
    }
  }

  void Connect(int64_t id, const RequestHeaders& h) {
    int status = 200;
    if (h.method != "CONNECT" || h.protocol != "webtransport") {
      status = h.method == "CONNECT" ? 501 : 405;
    } else if (session_stream >= 0) {
      status = 429;  // one session per connection
    } else {
      const std::string ip = remote.address().to_string();
      handler = env.acceptor->Accept(h.path, ip);
      if (!handler) status = 404;
    }
    SendBuffer& out = streams[id].send;
    out.Queue(codec.ResponseHeaders(id, status));
    if (status != 200) {
      out.fin = true;
      return;
    }
    session_stream = id;
    prefix = DatagramPrefix(static_cast<uint64_t>(id));
    handler->OnOpen(*self);
  }

  void EndSession() {
    if (session_over || !handler) return;
    session_over = true;
    handler->OnEnd();
    // Not destroyed here: this may run inside one of its own calls.
    asio::post(timer.get_executor(),
               [h = std::shared_ptr<WtSessionHandler>(std::move(handler))] {});
  }

  // ---- Streams out ----

  void Acked(int64_t id, uint64_t upto) {
    auto it = streams.find(id);
    if (it == streams.end()) return;
    it->second.send.Acked(upto);
  }

  void OpenOwnStreams() {
    const std::array<std::string, 3> preambles = {
        ServerControlStreamPreamble(), std::string(1, kUniQpackEncoder),
        std::string(1, kUniQpackDecoder)};
    for (const std::string& p : preambles) {
      int64_t id = -1;
      if (ngtcp2_conn_open_uni_stream(conn, &id, nullptr) != 0) return;
      Stream& s = streams[id];
      s.kind = Kind::kOwnUni;
      s.send.Queue(p);
    }
  }

  void Send(const uint8_t* data, size_t len) {
    boost::system::error_code ec;
    // Non-blocking: a full socket buffer loses the packet, which QUIC
    // recovers like any loss.
    env.socket->send_to(asio::buffer(data, len), remote, 0, ec);
  }

  void Write() {
    if (in_callback) {
      write_due = true;
      return;
    }
    if (closing || dead || conn == nullptr) return;
    std::array<uint8_t, kMaxPacket> buf;
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi{};
    const ngtcp2_tstamp ts = Now();
    for (int guard = 0; guard < 4096; ++guard) {
      int64_t id = -1;
      SendBuffer* b = nullptr;
      for (auto& [sid, s] : streams) {
        if (s.send.Pending()) {
          id = sid;
          b = &s.send;
          break;
        }
      }
      if (b == nullptr && !datagrams.empty()) {
        const std::string& d = datagrams.front();
        ngtcp2_vec v{reinterpret_cast<uint8_t*>(const_cast<char*>(d.data())),
                     d.size()};
        int accepted = 0;
        ngtcp2_ssize n = ngtcp2_conn_writev_datagram(
            conn, &ps.path, &pi, buf.data(), buf.size(), &accepted,
            NGTCP2_WRITE_DATAGRAM_FLAG_NONE, 0, &v, 1, ts);
        if (n < 0 && n != NGTCP2_ERR_INVALID_ARGUMENT)
          return Fail(static_cast<int>(n));
        if (accepted != 0 || n < 0) datagrams.pop_front();
        if (n <= 0) {
          if (n == 0) break;  // congestion: the rest waits
          continue;
        }
        Send(buf.data(), static_cast<size_t>(n));
        continue;
      }
      std::array<ngtcp2_vec, 16> v;
      size_t nv = b != nullptr ? b->Unsent(v.data(), v.size()) : 0;
      uint32_t flags = b != nullptr ? NGTCP2_WRITE_STREAM_FLAG_MORE : 0;
      const bool fin = b != nullptr && b->fin;
      if (fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
      ngtcp2_ssize datalen = -1;
      ngtcp2_ssize n =
          ngtcp2_conn_writev_stream(conn, &ps.path, &pi, buf.data(), buf.size(),
                                    &datalen, flags, id, v.data(), nv, ts);
      if (n < 0) {
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED ||
            n == NGTCP2_ERR_STREAM_SHUT_WR ||
            n == NGTCP2_ERR_STREAM_NOT_FOUND) {
          b->blocked = true;
          continue;
        }
        if (n == NGTCP2_ERR_WRITE_MORE) {
          b->Advance(datalen, fin);
          continue;
        }
        return Fail(static_cast<int>(n));
      }
      if (b != nullptr) b->Advance(datalen, fin);
      if (n == 0) break;
      Send(buf.data(), static_cast<size_t>(n));
    }
    ArmTimer();
  }

  void ArmTimer() {
    if (dead || conn == nullptr) return;
    const ngtcp2_tstamp expiry = ngtcp2_conn_get_expiry(conn);
    const ngtcp2_tstamp now = Now();
    const uint64_t wait_ns = expiry > now ? expiry - now : 0;
    timer.expires_after(std::chrono::nanoseconds(
        std::min<uint64_t>(wait_ns, uint64_t{3600} * NGTCP2_SECONDS)));
    timer.async_wait([this](boost::system::error_code ec) {
      if (ec || dead) return;
      OnTimer();
    });
  }

  void OnTimer() {
    if (closing) return Die();
    const int rv = ngtcp2_conn_handle_expiry(conn, Now());
    if (rv != 0) return Die();  // idle timeout, or the handshake's
    Write();
  }

  void Fail(int liberr) {
    ngtcp2_connection_close_error ccerr;
    ngtcp2_connection_close_error_default(&ccerr);
    ngtcp2_connection_close_error_set_transport_error_liberr(&ccerr, liberr,
                                                             nullptr, 0);
    SendClose(ccerr);
  }

  void CloseConnection(uint64_t app_code, std::string_view reason) {
    if (in_callback) {
      // Not from inside ngtcp2: on the next turn.
      asio::post(timer.get_executor(), [this, app_code] {
        if (!dead) CloseConnection(app_code, "");
      });
      return;
    }
    ngtcp2_connection_close_error ccerr;
    ngtcp2_connection_close_error_default(&ccerr);
    ngtcp2_connection_close_error_set_application_error(
        &ccerr, app_code, reinterpret_cast<const uint8_t*>(reason.data()),
        reason.size());
    SendClose(ccerr);
  }

  void SendClose(const ngtcp2_connection_close_error& ccerr) {
    EndSession();
    if (closing || dead) return;
    closing = true;
    if (!ngtcp2_conn_is_in_draining_period(conn)) {
      std::array<uint8_t, kMaxPacket> buf;
      ngtcp2_path_storage ps;
      ngtcp2_path_storage_zero(&ps);
      ngtcp2_pkt_info pi{};
      ngtcp2_ssize n = ngtcp2_conn_write_connection_close(
          conn, &ps.path, &pi, buf.data(), buf.size(), &ccerr, Now());
      if (n > 0) Send(buf.data(), static_cast<size_t>(n));
    }
    EndAfterClosingPeriod();
  }

  // Three probe timeouts, then the connection's state goes.
  void EndAfterClosingPeriod() {
    timer.expires_after(
        std::chrono::nanoseconds(3 * ngtcp2_conn_get_pto(conn)));
    timer.async_wait([this](boost::system::error_code ec) {
      if (!ec && !dead) Die();
    });
  }

  void Die() {
    if (dead) return;
    EndSession();
    dead = true;
    timer.cancel();
    linger.cancel();
    env.on_dead(self);
  }

  void Read(std::span<const uint8_t> packet, const udp::endpoint& from) {
    if (dead) return;
    if (closing) return;  // the close was sent; the timer ends it
    remote = from;
    ngtcp2_path path = Path(env.local, remote);
    ngtcp2_pkt_info pi{};
    for (auto& [id, s] : streams) s.send.blocked = false;
    in_callback = true;
    const int rv = ngtcp2_conn_read_pkt(conn, &path, &pi, packet.data(),
                                        packet.size(), Now());
    in_callback = false;
    if (rv != 0) {
      if (rv == NGTCP2_ERR_DRAINING) {
        EndSession();
        closing = true;
        return EndAfterClosingPeriod();
      }
      if (rv == NGTCP2_ERR_DROP_CONN) return Die();
      if (rv == NGTCP2_ERR_CRYPTO) {
        ngtcp2_connection_close_error ccerr;
        ngtcp2_connection_close_error_default(&ccerr);
        ngtcp2_connection_close_error_set_transport_error_tls_alert(
            &ccerr, ngtcp2_conn_get_tls_alert(conn), nullptr, 0);
        return SendClose(ccerr);
      }
      return Fail(rv);
    }
    write_due = false;
    Write();
  }
};

std::unique_ptr<QuicConnection> QuicConnection::Accept(
    const Env& env, const ngtcp2_pkt_hd& hd, const udp::endpoint& remote,
    std::string* error) {
  auto im = std::make_unique<Impl>(env);
  im->remote = remote;
  ngtcp2_callbacks cb{};
  cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.update_key = ngtcp2_crypto_update_key_cb;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  cb.recv_stream_data = Impl::OnRecvStreamData;
  cb.acked_stream_data_offset = Impl::OnAcked;
  cb.stream_close = Impl::OnStreamClose;
  cb.recv_datagram = Impl::OnDatagram;
  cb.handshake_completed = Impl::OnHandshakeCompleted;
  cb.rand = Impl::OnRand;
  cb.get_new_connection_id = Impl::OnNewCid;
  cb.remove_connection_id = Impl::OnRemoveCid;
  cb.extend_max_stream_data = Impl::OnExtendStreamData;

  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = Now();
  const ngtcp2_transport_params params =
      ServerTransportParams(hd.dcid, env.idle_timeout_ms);

  ngtcp2_cid scid;
  scid.datalen = kCidLen;
  Random(scid.data, kCidLen);
  const ngtcp2_path path = Path(im->env.local, im->remote);
  int rv = ngtcp2_conn_server_new(&im->conn, &hd.scid, &scid, &path, hd.version,
                                  &cb, &settings, &params, nullptr, im.get());
  if (rv != 0) {
    *error = std::string("ngtcp2: ") + ngtcp2_strerror(rv);
    return nullptr;
  }
  Result<gnutls_session_t> tls = MakeServerTlsSession(*env.tls);
  if (!tls.ok()) {
    *error = tls.status().message();
    return nullptr;
  }
  im->tls = tls.value();
  im->conn_ref.get_conn = Impl::GetConn;
  im->conn_ref.user_data = im.get();
  gnutls_session_set_ptr(im->tls, &im->conn_ref);
  ngtcp2_conn_set_tls_native_handle(im->conn, im->tls);

  Impl* raw = im.get();
  std::unique_ptr<QuicConnection> out(new QuicConnection(std::move(im)));
  raw->self = out.get();
  // Our id and the client's original destination id (its second Initial
  // still carries that one) both lead here.
  raw->AddCid(CidKey(scid.data, scid.datalen));
  raw->AddCid(CidKey(hd.dcid.data, hd.dcid.datalen));
  return out;
}

QuicConnection::QuicConnection(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
QuicConnection::~QuicConnection() = default;

void QuicConnection::OnPacket(std::span<const uint8_t> packet,
                              const udp::endpoint& remote) {
  impl_->Read(packet, remote);
}

void QuicConnection::Shutdown(uint32_t code, std::string_view reason) {
  CloseSession(code, reason);
  impl_->CloseConnection(kH3NoError, reason);
}

const std::string& QuicConnection::datagram_prefix() const {
  return impl_->prefix;
}

size_t QuicConnection::max_datagram() const {
  const ngtcp2_transport_params* p =
      ngtcp2_conn_get_remote_transport_params(impl_->conn);
  size_t mtu = ngtcp2_conn_get_path_max_tx_udp_payload_size(impl_->conn);
  // Short header (1 + 20-byte id + 4-byte number), AEAD tag, frame header.
  size_t room = mtu > 48 ? mtu - 48 : 0;
  if (p != nullptr) room = std::min<uint64_t>(room, p->max_datagram_frame_size);
  return room;
}

void QuicConnection::SendDatagram(std::string datagram) {
  if (impl_->datagrams.size() >= kMaxQueuedDatagrams) {
    impl_->datagrams.pop_front();
  }
  impl_->datagrams.push_back(std::move(datagram));
}

bool QuicConnection::SendOnStream(int64_t stream_id, std::string bytes) {
  auto it = impl_->streams.find(stream_id);
  if (it == impl_->streams.end() || it->second.send.fin) return false;
  it->second.send.Queue(std::move(bytes));
  return true;
}

void QuicConnection::FinishStream(int64_t stream_id) {
  auto it = impl_->streams.find(stream_id);
  if (it != impl_->streams.end()) it->second.send.fin = true;
}

size_t QuicConnection::StreamBacklog(int64_t stream_id) const {
  auto it = impl_->streams.find(stream_id);
  if (it == impl_->streams.end()) return 0;
  return it->second.send.backlog();
}

void QuicConnection::Flush() { impl_->Write(); }

void QuicConnection::CloseSession(uint32_t code, std::string_view reason) {
  Impl& im = *impl_;
  if (im.session_stream < 0 || im.session_over) return;
  auto it = im.streams.find(im.session_stream);
  if (it != im.streams.end() && !it->second.send.fin) {
    it->second.send.Queue(im.codec.DataFrame(EncodeCloseSession(code, reason)));
    it->second.send.fin = true;
    im.linger.expires_after(std::chrono::seconds(2));
    im.linger.async_wait([&im](boost::system::error_code ec) {
      if (!ec && !im.dead && !im.closing) im.CloseConnection(kH3NoError, "");
    });
  }
  im.EndSession();
  im.Write();
}

std::optional<int64_t> QuicConnection::rtt_us() const {
  ngtcp2_conn_stat stat;
  ngtcp2_conn_get_conn_stat(impl_->conn, &stat);
  if (stat.first_rtt_sample_ts == UINT64_MAX) return std::nullopt;
  return static_cast<int64_t>(stat.smoothed_rtt / 1000);
}

}  // namespace tessera::net::wt
