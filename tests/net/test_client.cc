#include "tests/net/test_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cctype>
#include <functional>

namespace tessera::net::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Runs `ioc` on the calling thread until `done()` or `timeout_ms`. False on
// timeout or when nothing is left to run.
bool RunUntil(asio::io_context& ioc, const std::function<bool()>& done,
              int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (ioc.stopped()) ioc.restart();
    const auto now = Clock::now();
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

Status IoFail(std::string_view what, const beast::error_code& ec) {
  return IoError(std::string(what) + ": " + ec.message());
}

// Resolves and connects `stream` to the first address within the deadline;
// `receive_buffer_bytes` > 0 sets SO_RCVBUF first.
Status ConnectStream(asio::io_context& ioc, beast::tcp_stream& stream,
                     const std::string& host, uint16_t port, int timeout_ms,
                     int receive_buffer_bytes = 0) {
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return IoFail("resolve " + host, ec);
  if (endpoints.empty()) return IoError("resolve " + host + ": no address");
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  if (stream.socket().open(endpoint.protocol(), ec)) return IoFail("open", ec);
  if (receive_buffer_bytes > 0) {
    stream.socket().set_option(
        asio::socket_base::receive_buffer_size(receive_buffer_bytes), ec);
    if (ec) return IoFail("SO_RCVBUF", ec);
  }
  bool done = false;
  stream.async_connect(endpoint, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  if (!RunUntil(
          ioc, [&] { return done; }, timeout_ms)) {
    stream.close();
    RunUntil(
        ioc, [&] { return done; }, 1000);
    return Timeout("connect");
  }
  if (ec) return IoFail("connect " + host + ":" + std::to_string(port), ec);
  beast::error_code opt_ec;
  stream.socket().set_option(tcp::no_delay(true), opt_ec);
  return Status::Ok();
}

}  // namespace

std::string PercentEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// ---- TestClient ----

struct TestClient::Impl {
  asio::io_context ioc;
  websocket::stream<beast::tcp_stream> ws{ioc};
  std::string subprotocol;
  uint64_t hello_flags = 0;
  beast::flat_buffer buffer;
  // The read in flight (kept across timeouts).
  bool read_pending = false;
  bool read_done = false;
  beast::error_code read_ec;
  bool closed = false;
  CloseInfo close;

  ~Impl() {
    beast::error_code ec;
    beast::get_lowest_layer(ws).socket().close(ec);
    ioc.restart();
    ioc.poll();  // let the cancelled operations finish
  }

  Status Write(std::string_view bytes, bool binary, int timeout_ms) {
    if (closed) return IoError("the connection is closed");
    ws.binary(binary);
    bool done = false;
    beast::error_code ec;
    ws.async_write(asio::buffer(bytes.data(), bytes.size()),
                   [&](beast::error_code e, size_t) {
                     ec = e;
                     done = true;
                   });
    if (!RunUntil(
            ioc, [&] { return done; }, timeout_ms)) {
      // Beast cannot abandon a write: drop the connection.
      beast::get_lowest_layer(ws).socket().close(ec);
      RunUntil(
          ioc, [&] { return done; }, 1000);
      return Timeout("write");
    }
    if (ec) return IoFail("write", ec);
    return Status::Ok();
  }
};

TestClient::TestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TestClient::~TestClient() = default;

Result<std::unique_ptr<TestClient>> TestClient::Connect(
    const ClientOptions& options, std::string_view shard_id) {
  return ConnectTarget(options, "/shard/" + PercentEncode(shard_id));
}

Result<std::unique_ptr<TestClient>> TestClient::ConnectTarget(
    const ClientOptions& options, std::string_view target) {
  auto impl = std::make_unique<Impl>();
  Status connected = ConnectStream(
      impl->ioc, beast::get_lowest_layer(impl->ws), options.host, options.port,
      options.timeout_ms, options.receive_buffer_bytes);
  if (!connected.ok()) return connected;
  impl->ws.read_message_max(options.max_message_bytes);
  const std::string subprotocol = options.subprotocol;
  impl->ws.set_option(websocket::stream_base::decorator(
      [subprotocol](websocket::request_type& req) {
        if (!subprotocol.empty()) {
          req.set(http::field::sec_websocket_protocol, subprotocol);
        }
      }));
  websocket::response_type response;
  bool done = false;
  beast::error_code ec;
  impl->ws.async_handshake(response,
                           options.host + ":" + std::to_string(options.port),
                           std::string(target), [&](beast::error_code e) {
                             ec = e;
                             done = true;
                           });
  if (!RunUntil(
          impl->ioc, [&] { return done; }, options.timeout_ms)) {
    return Timeout("WebSocket upgrade");
  }
  if (ec) {
    return IoError("WebSocket upgrade refused (HTTP " +
                   std::to_string(response.result_int()) +
                   "): " + ec.message());
  }
  impl->subprotocol =
      std::string(response[http::field::sec_websocket_protocol]);
  impl->hello_flags = options.hello_flags;
  return std::unique_ptr<TestClient>(new TestClient(std::move(impl)));
}

const std::string& TestClient::subprotocol() const {
  return impl_->subprotocol;
}

Status TestClient::Send(std::string_view bytes, int timeout_ms) {
  return impl_->Write(bytes, true, timeout_ms);
}

Status TestClient::SendText(std::string_view text, int timeout_ms) {
  return impl_->Write(text, false, timeout_ms);
}

Status TestClient::SendHello(std::string_view ticket, uint64_t version,
                             uint64_t flags) {
  return Send(v1::EncodeHello(ticket, version, flags));
}

Status TestClient::SendInput(uint64_t seq, std::string_view payload,
                             std::optional<uint64_t> view_tick) {
  return Send(v1::EncodeInput(seq, payload, view_tick));
}

Status TestClient::SendPing(uint64_t nonce) {
  return Send(v1::EncodePing(nonce));
}

Status TestClient::SendPong(uint64_t nonce) {
  return Send(v1::EncodePong(nonce));
}

Result<ClientEvent> TestClient::Read(int timeout_ms) {
  Impl& im = *impl_;
  ClientEvent event;
  if (im.closed) {
    event.closed = true;
    event.close = im.close;
    return event;
  }
  if (!im.read_pending) {
    im.read_pending = true;
    im.read_done = false;
    im.ws.async_read(im.buffer, [&im](beast::error_code ec, size_t) {
      im.read_ec = ec;
      im.read_done = true;
    });
  }
  if (!RunUntil(
          im.ioc, [&im] { return im.read_done; }, timeout_ms)) {
    return Timeout("read");
  }
  im.read_pending = false;
  if (im.read_ec) {
    im.closed = true;
    if (im.read_ec == websocket::error::closed) {
      im.close.code = im.ws.reason().code;
      im.close.reason = std::string(im.ws.reason().reason.data(),
                                    im.ws.reason().reason.size());
    } else {
      im.close.code = 0;
      im.close.reason = im.read_ec.message();
    }
    event.closed = true;
    event.close = im.close;
    return event;
  }
  event.binary = im.ws.got_binary();
  event.bytes = beast::buffers_to_string(im.buffer.data());
  im.buffer.consume(im.buffer.size());
  return event;
}

Result<v1::ServerMessage> TestClient::ReadMessage(int timeout_ms) {
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

Result<CloseInfo> TestClient::WaitClose(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - Clock::now())
                          .count();
    if (left <= 0) return Timeout("waiting for the close");
    Result<ClientEvent> event = Read(static_cast<int>(left));
    if (!event.ok()) return event.status();
    if (event->closed) return event->close;
  }
}

Result<v1::Welcome> TestClient::Join(std::string_view ticket, int timeout_ms) {
  Status sent = SendHello(ticket, v1::kVersion, impl_->hello_flags);
  if (!sent.ok()) return sent;
  return ReadUntil<v1::Welcome>(timeout_ms);
}

Status TestClient::Close(int timeout_ms) {
  Impl& im = *impl_;
  if (im.closed) return Status::Ok();
  bool done = false;
  beast::error_code ec;
  im.ws.async_close(websocket::close_code::normal, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  if (!RunUntil(
          im.ioc, [&] { return done; }, timeout_ms)) {
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
  if (ec && ec != asio::error::operation_aborted) return IoFail("close", ec);
  return Status::Ok();
}

bool TestClient::closed() const { return impl_->closed; }

// ---- HTTP ----

struct HttpConnection::Impl {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
  std::string host;
  ~Impl() {
    beast::error_code ec;
    stream.socket().close(ec);
    ioc.restart();
    ioc.poll();
  }
};

HttpConnection::HttpConnection(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
HttpConnection::~HttpConnection() = default;

Result<std::unique_ptr<HttpConnection>> HttpConnection::Connect(
    const std::string& host, uint16_t port, int timeout_ms) {
  auto impl = std::make_unique<Impl>();
  impl->host = host + ":" + std::to_string(port);
  Status connected =
      ConnectStream(impl->ioc, impl->stream, host, port, timeout_ms);
  if (!connected.ok()) return connected;
  return std::unique_ptr<HttpConnection>(new HttpConnection(std::move(impl)));
}

Result<HttpResult> HttpConnection::Request(
    std::string_view method, std::string_view target, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers,
    bool keep_alive, int timeout_ms) {
  Impl& im = *impl_;
  http::request<http::string_body> req;
  req.method_string(std::string(method));
  req.target(std::string(target));
  req.version(11);
  req.set(http::field::host, im.host);
  for (const auto& [name, value] : headers) req.insert(name, value);
  req.body() = std::string(body);
  req.keep_alive(keep_alive);
  req.prepare_payload();

  bool done = false;
  beast::error_code ec;
  http::async_write(im.stream, req, [&](beast::error_code e, size_t) {
    ec = e;
    done = true;
  });
  if (!RunUntil(
          im.ioc, [&] { return done; }, timeout_ms)) {
    im.stream.close();
    RunUntil(
        im.ioc, [&] { return done; }, 1000);
    return Timeout("HTTP write");
  }
  if (ec) return IoFail("HTTP write", ec);

  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  done = false;
  http::async_read(im.stream, im.buffer, parser,
                   [&](beast::error_code e, size_t) {
                     ec = e;
                     done = true;
                   });
  if (!RunUntil(
          im.ioc, [&] { return done; }, timeout_ms)) {
    im.stream.close();
    RunUntil(
        im.ioc, [&] { return done; }, 1000);
    return Timeout("HTTP read");
  }
  if (ec) return IoFail("HTTP read", ec);
  http::response<http::string_body> res = parser.release();
  HttpResult result;
  result.status = res.result_int();
  result.body = std::move(res.body());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (char& c : name) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    result.headers[name] = std::string(field.value());
  }
  return result;
}

Result<HttpResult> HttpCall(
    const std::string& host, uint16_t port, std::string_view method,
    std::string_view target, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers,
    int timeout_ms) {
  auto conn = HttpConnection::Connect(host, port, timeout_ms);
  if (!conn.ok()) return conn.status();
  return (*conn)->Request(method, target, body, headers, false, timeout_ms);
}

}  // namespace tessera::net::testing
