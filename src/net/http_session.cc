// Threading: one HttpSession per TCP connection, running on its strand; the
// routed HttpHandler is called there (so concurrently for different connections).
#include "net/http_session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "net/router.h"
#include "net/server_context.h"
#include "net/session_factory.h"

namespace tessera::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

// What Drain() reads at most of a refused request body.
constexpr size_t kMaxDrainBytes = 16 << 20;

std::string JsonError(std::string_view code, std::string_view message) {
  // Codes and messages here are fixed ASCII without quotes or backslashes.
  return "{\"code\":\"" + std::string(code) + "\",\"message\":\"" +
         std::string(message) + "\"}";
}

class HttpSession final : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(ServerContext& ctx, asio::ip::tcp::socket socket)
      : ctx_(ctx), stream_(std::move(socket)) {}

  void Run() {
    asio::dispatch(
        stream_.get_executor(),
        beast::bind_front_handler(&HttpSession::DoRead, shared_from_this()));
  }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(ctx_.options.max_http_body_bytes);
    stream_.expires_after(
        std::chrono::milliseconds(ctx_.options.http_idle_timeout_ms));
    http::async_read(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&HttpSession::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t /*bytes*/) {
    if (ec == http::error::end_of_stream) {
      Shutdown();
      return;
    }
    if (ec == http::error::body_limit) {
      // The client may still be sending the body: read and discard it after
      // the answer, so that it gets the 413 rather than a TCP reset.
      drain_after_write_ = true;
      Reply(http::status::payload_too_large, 11,
            JsonError("too_large",
                      "request body over " +
                          std::to_string(ctx_.options.max_http_body_bytes) +
                          " bytes"),
            /*keep_alive=*/false);
      return;
    }
    if (ec) return;  // timeout, reset, malformed: drop the connection
    http::request<http::string_body> req = parser_->release();
    parser_.reset();
    ctx_.metrics.http_requests->Add();

    std::string_view target(req.target().data(), req.target().size());
    std::string_view path = target.substr(0, target.find('?'));
    std::string_view rest;
    const SessionFactory* factory = websocket::is_upgrade(req)
                                        ? ctx_.router.FindSession(path, &rest)
                                        : nullptr;
    if (factory != nullptr) {
      std::string id;
      if (!PercentDecode(rest, &id) || id.empty()) {
        Reply(http::status::bad_request, req.version(),
              JsonError("bad_request", "bad resource id in the URL"), false);
        return;
      }
      stream_.expires_never();  // the WebSocket session has its own timers
      factory->Run(ctx_, std::move(stream_), std::move(req), std::move(id));
      return;
    }

    HttpRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(target);
    for (const auto& field : req) {
      std::string name(field.name_string());
      for (char& c : name) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      std::string_view value(field.value().data(), field.value().size());
      auto [it, inserted] = request.headers.emplace(name, value);
      if (!inserted) it->second.append(", ").append(value);
    }
    request.body = std::move(req.body());
    beast::error_code endpoint_ec;
    auto remote = stream_.socket().remote_endpoint(endpoint_ec);
    if (!endpoint_ec) request.remote_address = remote.address().to_string();

    HttpResponse response;
    HttpHandler* handler = ctx_.router.FindHttp(path);
    if (handler == nullptr) {
      response.status = 404;
      response.body = JsonError("not_found", "not found");
    } else {
      try {
        response = handler->Handle(request);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tessera: HTTP handler threw: %s\n", e.what());
        response = HttpResponse();
        response.status = 500;
        response.body = JsonError("internal", "internal error");
      }
    }
    const bool keep_alive =
        req.keep_alive() && !ctx_.Stopping(nullptr, nullptr);
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), req.version());
    res->set(http::field::server, "tessera");
    res->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) {
      res->insert(name, value);
    }
    res->body() = std::move(response.body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    Write(std::move(res));
  }

  void Reply(http::status status, unsigned version, std::string body,
             bool keep_alive) {
    auto res =
        std::make_shared<http::response<http::string_body>>(status, version);
    res->set(http::field::server, "tessera");
    res->set(http::field::content_type, "application/json");
    res->body() = std::move(body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    Write(std::move(res));
  }

  void Write(std::shared_ptr<http::response<http::string_body>> res) {
    response_ = std::move(res);
    stream_.expires_after(
        std::chrono::milliseconds(ctx_.options.http_idle_timeout_ms));
    http::async_write(
        stream_, *response_,
        beast::bind_front_handler(&HttpSession::OnWrite, shared_from_this()));
  }

  void OnWrite(beast::error_code ec, size_t /*bytes*/) {
    if (ec) return;
    const bool keep_alive = response_->keep_alive();
    response_.reset();
    if (!keep_alive) {
      Shutdown();
      if (drain_after_write_) Drain();
      return;
    }
    DoRead();
  }

  // Reads and discards what the client still sends (at most kMaxDrainBytes,
  // within the idle timeout), then closes.
  void Drain() {
    if (drain_buffer_.empty()) drain_buffer_.resize(16 * 1024);
    stream_.expires_after(
        std::chrono::milliseconds(ctx_.options.http_idle_timeout_ms));
    stream_.async_read_some(
        asio::buffer(drain_buffer_),
        [self = shared_from_this()](beast::error_code ec, size_t bytes) {
          self->drained_bytes_ += bytes;
          if (ec || self->drained_bytes_ > kMaxDrainBytes) {
            self->stream_.close();
            return;
          }
          self->Drain();
        });
  }

  void Shutdown() {
    beast::error_code ec;
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  }

  ServerContext& ctx_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<http::response<http::string_body>> response_;
  bool drain_after_write_ = false;
  std::vector<char> drain_buffer_;
  size_t drained_bytes_ = 0;
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = HexValue(in[i + 1]);
    const int lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

void RunHttpSession(ServerContext& ctx, asio::ip::tcp::socket socket) {
  std::make_shared<HttpSession>(ctx, std::move(socket))->Run();
}

}  // namespace tessera::net
