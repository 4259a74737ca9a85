#include "net/client/blocking_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>

#include "net/client/url.h"
#include "net/client/ws_client.h"

namespace tessera::net::client {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

// Runs `ioc` on the calling thread until `done()` or `timeout_ms`. False on
// timeout or when nothing is left to run.
bool RunUntil(asio::io_context& ioc, const std::function<bool()>& done,
              int timeout_ms) {
  const auto deadline =
      SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (ioc.stopped()) ioc.restart();
    const auto now = SteadyClock::now();
    if (now >= deadline) return false;
    if (ioc.run_one_for(deadline - now) == 0 && ioc.stopped() && !done()) {
      ioc.restart();
      return false;
    }
  }
  return true;
}

Status Timeout(std::string_view what) {
  return Status(StatusCode::kDeadlineExceeded,
                std::string(what) + ": timed out");
}

// How long a dropped connection may take to report its end.
constexpr int kDropMs = 1000;

}  // namespace

struct BlockingClient::Impl {
  asio::io_context ioc;
  std::shared_ptr<WsClient> ws;
  uint64_t hello_flags = 0;
  // The read in flight (kept across timeouts).
  bool read_pending = false;
  bool read_done = false;
  ClientEvent read_event;
  bool closed = false;
  CloseInfo close;

  ~Impl() {
    if (ws) ws->Abort();
    ioc.restart();
    ioc.poll();  // let the cancelled operations finish
  }

  void Drop() {
    ws->Abort();
    RunUntil(
        ioc, [this] { return ws->ended(); }, kDropMs);
  }

  Status Write(std::string_view bytes, bool binary, int timeout_ms) {
    if (closed || ws->ended() || ws->write_failed()) {
      return IoError("the connection is closed");
    }
    const uint64_t target = ws->written() + ws->queued() + 1;
    ws->Send(std::string(bytes), binary);
    auto finished = [&] {
      return ws->written() >= target || ws->ended() || ws->write_failed();
    };
    if (!RunUntil(ioc, finished, timeout_ms)) {
      Drop();
      return Timeout("write");
    }
    if (ws->written() < target) return IoError("write: the connection ended");
    return Status::Ok();
  }
};

BlockingClient::BlockingClient(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
BlockingClient::~BlockingClient() = default;

Result<std::unique_ptr<BlockingClient>> BlockingClient::Connect(
    const ClientOptions& options, std::string_view shard_id) {
  return ConnectTarget(options, "/shard/" + PercentEncode(shard_id));
}

Result<std::unique_ptr<BlockingClient>> BlockingClient::ConnectTarget(
    const ClientOptions& options, std::string_view target) {
  auto impl = std::make_unique<Impl>();
  tcp::resolver resolver(impl->ioc);
  boost::system::error_code ec;
  auto endpoints =
      resolver.resolve(options.host, std::to_string(options.port), ec);
  if (ec) return IoError("resolve " + options.host + ": " + ec.message());
  if (endpoints.empty()) return IoError("resolve " + options.host + ": none");
  WsTarget ws_target;
  ws_target.endpoint = endpoints.begin()->endpoint();
  ws_target.host = options.host;
  ws_target.host_header = options.host + ":" + std::to_string(options.port);
  ws_target.path = std::string(target);
  ws_target.subprotocol = options.subprotocol;
  ws_target.max_message_bytes = options.max_message_bytes;
  ws_target.receive_buffer_bytes = options.receive_buffer_bytes;
  impl->ws = WsClient::Create(impl->ioc, options.tls);
  std::optional<Status> connected;
  impl->ws->Connect(ws_target, std::chrono::milliseconds(options.timeout_ms),
                    [&connected](Status s) { connected = std::move(s); });
  // The client's own deadline ends the connect; this one is a backstop.
  if (!RunUntil(
          impl->ioc, [&] { return connected.has_value(); },
          options.timeout_ms + kDropMs)) {
    return Timeout("WebSocket connect");
  }
  if (!connected->ok()) return *connected;
  impl->hello_flags = options.hello_flags;
  return std::unique_ptr<BlockingClient>(new BlockingClient(std::move(impl)));
}

const std::string& BlockingClient::subprotocol() const {
  return impl_->ws->subprotocol();
}

Status BlockingClient::Send(std::string_view bytes, int timeout_ms) {
  return impl_->Write(bytes, true, timeout_ms);
}

Status BlockingClient::SendText(std::string_view text, int timeout_ms) {
  return impl_->Write(text, false, timeout_ms);
}

Status BlockingClient::SendHello(std::string_view ticket, uint64_t version,
                                 uint64_t flags) {
  return Send(v1::EncodeHello(ticket, version, flags));
}

Status BlockingClient::SendInput(uint64_t seq, std::string_view payload,
                                 std::optional<double> view_tick) {
  return Send(v1::EncodeInput(seq, payload, view_tick));
}

Status BlockingClient::SendPing(uint64_t nonce) {
  return Send(v1::EncodePing(nonce));
}

Status BlockingClient::SendPong(uint64_t nonce) {
  return Send(v1::EncodePong(nonce));
}

Result<ClientEvent> BlockingClient::Read(int timeout_ms) {
  Impl& im = *impl_;
  if (im.closed) {
    ClientEvent event;
    event.closed = true;
    event.close = im.close;
    return event;
  }
  if (!im.read_pending) {
    im.read_pending = true;
    im.read_done = false;
    im.ws->ReadOne(
        [&im](const uint8_t* data, size_t size, bool binary) {
          im.read_event = ClientEvent{};
          im.read_event.binary = binary;
          im.read_event.bytes.assign(reinterpret_cast<const char*>(data), size);
          im.read_done = true;
        },
        [&im](int code, const std::string& reason) {
          im.read_event = ClientEvent{};
          im.read_event.closed = true;
          im.read_event.close.code = code == kClosedAbnormally ? 0 : code;
          im.read_event.close.reason = reason;
          im.read_done = true;
        });
  }
  if (!RunUntil(
          im.ioc, [&im] { return im.read_done; }, timeout_ms)) {
    return Timeout("read");
  }
  im.read_pending = false;
  if (im.read_event.closed) {
    im.closed = true;
    im.close = im.read_event.close;
  }
  return std::move(im.read_event);
}

Result<v1::ServerMessage> BlockingClient::ReadMessage(int timeout_ms) {
  Result<ClientEvent> event = Read(timeout_ms);
  if (!event.ok()) return event.status();
  if (event->closed) {
    return IoError("closed " + std::to_string(event->close.code) + ": " +
                   event->close.reason);
  }
  std::span<const uint8_t> bytes(
      reinterpret_cast<const uint8_t*>(event->bytes.data()),
      event->bytes.size());
  return v1::DecodeServerMessage(bytes);
}

Result<CloseInfo> BlockingClient::WaitClose(int timeout_ms) {
  const auto deadline =
      SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - SteadyClock::now())
                          .count();
    if (left <= 0) return Timeout("waiting for the close");
    Result<ClientEvent> event = Read(static_cast<int>(left));
    if (!event.ok()) return event.status();
    if (event->closed) return event->close;
  }
}

Result<v1::Welcome> BlockingClient::Join(std::string_view ticket,
                                         int timeout_ms) {
  Status sent = SendHello(ticket, v1::kVersion, impl_->hello_flags);
  if (!sent.ok()) return sent;
  return ReadUntil<v1::Welcome>(timeout_ms);
}

Status BlockingClient::Close(int timeout_ms) {
  Impl& im = *impl_;
  if (im.closed) return Status::Ok();
  im.ws->Close();
  if (!RunUntil(
          im.ioc, [&im] { return im.ws->ended(); }, timeout_ms)) {
    return Timeout("close");
  }
  // A pending read ends with the close too.
  if (im.read_pending) {
    RunUntil(
        im.ioc, [&im] { return im.read_done; }, timeout_ms);
    im.read_pending = false;
  }
  im.closed = true;
  im.close.code = 1000;
  return Status::Ok();
}

bool BlockingClient::closed() const { return impl_->closed; }

}  // namespace tessera::net::client
