#include "loadtest/http_post.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <type_traits>

namespace tessera::loadtest {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One request on its own connection ("Connection: close").
template <typename Stream>
class PostCall : public std::enable_shared_from_this<PostCall<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  PostCall(asio::io_context& ioc, asio::ssl::context* tls, const Url& url,
           std::string body, std::function<void(Result<HttpReply>)> done)
      : stream_(MakeStream(ioc, tls)), url_(url), done_(std::move(done)) {
    request_.method(http::verb::post);
    request_.target(url.path);
    request_.version(11);
    request_.set(http::field::host, url.HostHeader());
    request_.set(http::field::user_agent, "tessera-bench");
    request_.set(http::field::content_type, "application/json");
    request_.set(http::field::connection, "close");
    request_.body() = std::move(body);
    request_.prepare_payload();
  }

  void Start(const asio::ip::tcp::endpoint& endpoint,
             std::chrono::milliseconds timeout) {
    beast::get_lowest_layer(stream_).expires_after(timeout);
    beast::get_lowest_layer(stream_).async_connect(
        endpoint, [self = this->shared_from_this()](beast::error_code ec) {
          if (ec) return self->Fail("connect", ec);
          if constexpr (kTls) {
            self->Handshake();
          } else {
            self->Write();
          }
        });
  }

 private:
  static Stream MakeStream(asio::io_context& ioc, asio::ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(ioc, *tls);
    } else {
      (void)tls;
      return Stream(ioc);
    }
  }

  void Fail(const char* step, beast::error_code ec) {
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
    if (ec == beast::error::timeout) {
      return done_(Status(StatusCode::kDeadlineExceeded,
                          std::string(step) + ": timed out"));
    }
    done_(IoError(std::string(step) + ": " + ec.message()));
  }

  void Handshake() {
    if constexpr (kTls) {
      if (!SSL_set_tlsext_host_name(stream_.native_handle(),
                                    url_.host.c_str())) {
        return Fail("tls",
                    beast::error_code(static_cast<int>(::ERR_get_error()),
                                      asio::error::get_ssl_category()));
      }
      stream_.set_verify_callback(asio::ssl::host_name_verification(url_.host));
      stream_.async_handshake(
          asio::ssl::stream_base::client,
          [self = this->shared_from_this()](beast::error_code ec) {
            if (ec) return self->Fail("tls", ec);
            self->Write();
          });
    }
  }

  void Write() {
    http::async_write(
        stream_, request_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Fail("send", ec);
          self->Read();
        });
  }

  void Read() {
    http::async_read(
        stream_, buffer_, response_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Fail("receive", ec);
          beast::error_code ignored;
          beast::get_lowest_layer(self->stream_).socket().close(ignored);
          self->done_(HttpReply{static_cast<int>(self->response_.result_int()),
                                std::move(self->response_.body())});
        });
  }

  Stream stream_;
  Url url_;
  std::function<void(Result<HttpReply>)> done_;
  http::request<http::string_body> request_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> response_;
};

}  // namespace

void AsyncPostJson(asio::io_context& ioc, asio::ssl::context* tls,
                   const asio::ip::tcp::endpoint& endpoint, const Url& url,
                   std::string body, std::chrono::milliseconds timeout,
                   std::function<void(Result<HttpReply>)> done) {
  if (tls != nullptr) {
    auto call = std::make_shared<PostCall<TlsStream>>(
        ioc, tls, url, std::move(body), std::move(done));
    call->Start(endpoint, timeout);
  } else {
    auto call = std::make_shared<PostCall<PlainStream>>(
        ioc, nullptr, url, std::move(body), std::move(done));
    call->Start(endpoint, timeout);
  }
}

}  // namespace tessera::loadtest
