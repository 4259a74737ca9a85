#include "net/client/http_client.h"

#include <boost/beast/http.hpp>
#include <cctype>
#include <optional>
#include <type_traits>

#include "net/client/http_async.h"
#include "net/client/streams.h"

namespace tessera::net::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TimePoint = std::chrono::steady_clock::time_point;
using internal::PlainStream;
using internal::StepFailed;
using internal::TlsStream;

constexpr uint64_t kMaxBodyBytes = 64 << 20;

HttpResponse ToResponse(http::response<http::string_body>&& res) {
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (char& c : name) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    out.headers[name] = std::string(field.value());
  }
  out.body = std::move(res.body());
  return out;
}

// One connection: connect (and TLS), then request/response exchanges. The
// one implementation behind every call of http_client.h and http_async.h.
template <typename Stream>
class Exchange : public std::enable_shared_from_this<Exchange<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Exchange(asio::io_context& ioc, asio::ssl::context* tls, Url url)
      : stream_(internal::MakeStream<Stream, kTls>(ioc, tls)),
        url_(std::move(url)) {}

  // Tries each endpoint in turn until `deadline`.
  void Connect(std::vector<tcp::endpoint> endpoints, TimePoint deadline,
               std::function<void(Status)> done) {
    beast::get_lowest_layer(stream_).expires_at(deadline);
    beast::get_lowest_layer(stream_).async_connect(
        endpoints, [self = this->shared_from_this(), done = std::move(done)](
                       beast::error_code ec, const tcp::endpoint&) {
          if (ec) {
            self->Close();
            if (ec == beast::error::timeout) {
              return done(StepFailed("connect", ec));
            }
            return done(IoError("cannot connect to " + self->url_.host + ":" +
                                std::to_string(self->url_.port) + ": " +
                                ec.message()));
          }
          beast::error_code ignored;
          beast::get_lowest_layer(self->stream_)
              .socket()
              .set_option(tcp::no_delay(true), ignored);
          self->Handshake(std::move(done));
        });
  }

  // Writes `request` and reads the response until `deadline`.
  void Send(const HttpRequest& request, TimePoint deadline,
            std::function<void(Result<HttpResponse>)> done) {
    request_ = {};
    request_.method_string(request.method);
    request_.target(request.target);
    request_.version(11);
    request_.set(http::field::host, url_.HostHeader());
    request_.set(http::field::user_agent, "tessera");
    for (const auto& [name, value] : request.headers) {
      request_.insert(name, value);
    }
    request_.body() = request.body;
    request_.keep_alive(request.keep_alive);
    request_.prepare_payload();
    keep_alive_ = request.keep_alive;
    done_ = std::move(done);
    beast::get_lowest_layer(stream_).expires_at(deadline);
    http::async_write(
        stream_, request_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Finish(StepFailed("send", ec));
          self->Read();
        });
  }

  void Close() {
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

 private:
  void Handshake(std::function<void(Status)> done) {
    if constexpr (kTls) {
      if (beast::error_code ec = internal::PrepareTls(stream_, url_.host)) {
        Close();
        return done(StepFailed("tls", ec));
      }
      stream_.async_handshake(asio::ssl::stream_base::client,
                              [self = this->shared_from_this(),
                               done = std::move(done)](beast::error_code ec) {
                                if (ec) {
                                  self->Close();
                                  return done(StepFailed("tls", ec));
                                }
                                done(Status::Ok());
                              });
    } else {
      done(Status::Ok());
    }
  }

  void Read() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Finish(StepFailed("receive", ec));
          const bool keep_alive = self->parser_->keep_alive();
          HttpResponse response = ToResponse(self->parser_->release());
          if (!self->keep_alive_ || !keep_alive) self->Close();
          self->Finish(std::move(response));
        });
  }

  void Finish(Result<HttpResponse> result) {
    if (!result.ok()) Close();
    auto done = std::move(done_);
    done_ = nullptr;
    done(std::move(result));
  }

  Stream stream_;
  const Url url_;
  http::request<http::string_body> request_;
  bool keep_alive_ = false;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> parser_;
  std::function<void(Result<HttpResponse>)> done_;
};

TimePoint DeadlineAfter(int timeout_ms) {
  return std::chrono::steady_clock::now() +
         std::chrono::milliseconds(timeout_ms);
}

// Runs `ioc` until every operation started on it has completed (each is
// bounded by its stream's deadline).
void RunAll(asio::io_context& ioc) {
  ioc.restart();
  ioc.run();
}

}  // namespace

// ---- blocking ----

struct HttpConnection::Impl {
  asio::io_context ioc;
  std::shared_ptr<Exchange<PlainStream>> exchange;
  ~Impl() {
    if (exchange) exchange->Close();
    RunAll(ioc);
  }
};

HttpConnection::HttpConnection(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
HttpConnection::~HttpConnection() = default;

Result<std::unique_ptr<HttpConnection>> HttpConnection::Connect(
    const std::string& host, uint16_t port, int timeout_ms) {
  auto impl = std::make_unique<Impl>();
  Url url;
  url.scheme = "http";
  url.host = host;
  url.port = port;
  tcp::resolver resolver(impl->ioc);
  beast::error_code ec;
  auto found = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return IoError("cannot resolve " + host + ": " + ec.message());
  std::vector<tcp::endpoint> endpoints;
  for (const auto& entry : found) endpoints.push_back(entry.endpoint());
  if (endpoints.empty()) return IoError("cannot resolve " + host);
  impl->exchange =
      std::make_shared<Exchange<PlainStream>>(impl->ioc, nullptr, url);
  Status connected = Internal("connect did not finish");
  impl->exchange->Connect(std::move(endpoints), DeadlineAfter(timeout_ms),
                          [&connected](Status s) { connected = std::move(s); });
  RunAll(impl->ioc);
  if (!connected.ok()) return connected;
  return std::unique_ptr<HttpConnection>(new HttpConnection(std::move(impl)));
}

Result<HttpResponse> HttpConnection::Send(HttpRequest request, int timeout_ms) {
  Result<HttpResponse> result = Internal("the request did not finish");
  impl_->exchange->Send(
      request, DeadlineAfter(timeout_ms),
      [&result](Result<HttpResponse> r) { result = std::move(r); });
  RunAll(impl_->ioc);
  return result;
}

Result<HttpResponse> HttpConnection::Request(std::string_view method,
                                             std::string_view target,
                                             std::string_view body,
                                             const HttpHeaders& headers,
                                             bool keep_alive, int timeout_ms) {
  HttpRequest request;
  request.method = std::string(method);
  request.target = std::string(target);
  request.headers = headers;
  request.body = std::string(body);
  request.keep_alive = keep_alive;
  return Send(std::move(request), timeout_ms);
}

Result<HttpResponse> HttpCall(const std::string& host, uint16_t port,
                              std::string_view method, std::string_view target,
                              std::string_view body, const HttpHeaders& headers,
                              int timeout_ms) {
  const TimePoint deadline = DeadlineAfter(timeout_ms);
  auto connection = HttpConnection::Connect(host, port, timeout_ms);
  if (!connection.ok()) return connection.status();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return (*connection)
      ->Request(method, target, body, headers, /*keep_alive=*/false,
                static_cast<int>(std::max<int64_t>(1, left.count())));
}

Result<int> PostJson(std::string_view url_text, const std::string& body,
                     int timeout_ms) {
  Result<Url> url = ParseUrl(url_text);
  if (!url.ok()) return url.status();
  if (url->scheme != "http") {
    return InvalidArgument("\"" + std::string(url_text) +
                           "\" is not an http:// URL");
  }
  Result<HttpResponse> response =
      HttpCall(url->host, url->port, "POST", url->path, body,
               {{"Content-Type", "application/json"}}, timeout_ms);
  if (!response.ok()) return response.status();
  return response->status;
}

// ---- asynchronous ----

void AsyncHttpCall(asio::io_context& ioc, asio::ssl::context* tls,
                   const tcp::endpoint& endpoint, const Url& url,
                   HttpRequest request, std::chrono::milliseconds timeout,
                   std::function<void(Result<HttpResponse>)> done) {
  const TimePoint deadline = std::chrono::steady_clock::now() + timeout;
  auto run = [&](auto exchange) {
    exchange->Connect({endpoint}, deadline,
                      [exchange, request = std::move(request), deadline,
                       done = std::move(done)](Status connected) mutable {
                        if (!connected.ok()) return done(connected);
                        exchange->Send(request, deadline, std::move(done));
                      });
  };
  if (tls != nullptr) {
    run(std::make_shared<Exchange<TlsStream>>(ioc, tls, url));
  } else {
    run(std::make_shared<Exchange<PlainStream>>(ioc, nullptr, url));
  }
}

}  // namespace tessera::net::client
