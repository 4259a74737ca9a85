#include "loadtest/ws_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <type_traits>

namespace tessera::loadtest {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

using PlainStream = websocket::stream<beast::tcp_stream>;
using TlsStream = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;

template <typename Stream>
class WsClientImpl final
    : public WsClient,
      public std::enable_shared_from_this<WsClientImpl<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  WsClientImpl(asio::io_context& ioc, asio::ssl::context* tls)
      : ws_(MakeStream(ioc, tls)) {}

  void Connect(const WsTarget& target, std::chrono::milliseconds timeout,
               std::function<void(Status)> done) override {
    target_ = target;
    connect_done_ = std::move(done);
    auto self = this->shared_from_this();
    beast::get_lowest_layer(ws_).expires_after(timeout);
    beast::get_lowest_layer(ws_).async_connect(
        target.endpoint, [self](beast::error_code ec) {
          if (ec) return self->ConnectFailed("connect", ec);
          beast::error_code ignored;
          beast::get_lowest_layer(self->ws_).socket().set_option(
              asio::ip::tcp::no_delay(true), ignored);
          if constexpr (kTls) {
            self->TlsHandshake();
          } else {
            self->Upgrade();
          }
        });
  }

  void Run(MessageFn on_message, ClosedFn on_closed) override {
    on_message_ = std::move(on_message);
    on_closed_ = std::move(on_closed);
    Read();
  }

  void Send(std::string message) override {
    if (ended_ || closing_) return;
    outbox_.push_back(std::move(message));
    if (!writing_) Write();
  }

  void Close() override {
    if (ended_ || closing_) return;
    closing_ = true;
    if (!writing_) StartClose();  // else Write() starts it when done
  }

  void Abort() override {
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
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

  void ConnectFailed(const char* step, beast::error_code ec) {
    auto done = std::move(connect_done_);
    connect_done_ = nullptr;
    Abort();
    if (!done) return;
    if (ec == beast::error::timeout) {
      return done(Status(StatusCode::kDeadlineExceeded,
                         std::string(step) + ": timed out"));
    }
    done(IoError(std::string(step) + ": " + ec.message()));
  }

  void TlsHandshake() {
    if constexpr (kTls) {
      SSL* ssl = ws_.next_layer().native_handle();
      if (!SSL_set_tlsext_host_name(ssl, target_.host.c_str())) {
        return ConnectFailed(
            "tls", beast::error_code(static_cast<int>(::ERR_get_error()),
                                     asio::error::get_ssl_category()));
      }
      ws_.next_layer().set_verify_callback(
          asio::ssl::host_name_verification(target_.host));
      ws_.next_layer().async_handshake(
          asio::ssl::stream_base::client,
          [self = this->shared_from_this()](beast::error_code ec) {
            if (ec) return self->ConnectFailed("tls", ec);
            self->Upgrade();
          });
    }
  }

  void Upgrade() {
    // The tcp_stream's deadline still runs; the websocket's own timeouts
    // take over once upgraded.
    ws_.binary(true);
    ws_.async_handshake(
        target_.host_header, target_.path,
        [self = this->shared_from_this()](beast::error_code ec) {
          if (ec) return self->ConnectFailed("upgrade", ec);
          beast::get_lowest_layer(self->ws_).expires_never();
          // No idle timeout (the server pings); a close handshake may take
          // a few seconds at most.
          auto timeouts = websocket::stream_base::timeout::suggested(
              beast::role_type::client);
          timeouts.handshake_timeout = std::chrono::seconds(3);
          self->ws_.set_option(timeouts);
          auto done = std::move(self->connect_done_);
          self->connect_done_ = nullptr;
          if (done) done(Status::Ok());
        });
  }

  void Read() {
    ws_.async_read(buffer_, [self = this->shared_from_this()](
                                beast::error_code ec, size_t) {
      if (ec) {
        // The peer's close frame counts even when the connection then
        // failed before the close handshake completed.
        const auto& reason = self->ws_.reason();
        if (ec == websocket::error::closed || reason.code != 0) {
          return self->End(reason.code, std::string(reason.reason.data(),
                                                    reason.reason.size()));
        }
        return self->End(1006, ec.message());
      }
      const auto data = self->buffer_.cdata();
      if (self->on_message_) {
        self->on_message_(static_cast<const uint8_t*>(data.data()),
                          data.size());
      }
      self->buffer_.consume(data.size());
      if (!self->ended_) self->Read();
    });
  }

  void End(int code, const std::string& reason) {
    if (ended_) return;
    ended_ = true;
    auto on_closed = std::move(on_closed_);
    on_closed_ = nullptr;
    on_message_ = nullptr;
    outbox_.clear();
    Abort();
    if (on_closed) on_closed(code, reason);
  }

  void Write() {
    writing_ = true;
    ws_.async_write(
        asio::buffer(outbox_.front()),
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          self->writing_ = false;
          if (ec || self->ended_) return;  // the read sees it too
          self->outbox_.pop_front();
          if (!self->outbox_.empty()) {
            self->Write();
          } else if (self->closing_) {
            self->StartClose();
          }
        });
  }

  void StartClose() {
    writing_ = true;
    ws_.async_close(websocket::close_code::normal,
                    [self = this->shared_from_this()](beast::error_code) {
                      self->writing_ = false;
                    });
  }

  Stream ws_;
  WsTarget target_;
  beast::flat_buffer buffer_;
  std::function<void(Status)> connect_done_;
  MessageFn on_message_;
  ClosedFn on_closed_;
  std::deque<std::string> outbox_;
  bool writing_ = false;
  bool closing_ = false;
  bool ended_ = false;
};

}  // namespace

std::shared_ptr<WsClient> WsClient::Create(asio::io_context& ioc,
                                           asio::ssl::context* tls) {
  if (tls != nullptr)
    return std::make_shared<WsClientImpl<TlsStream>>(ioc, tls);
  return std::make_shared<WsClientImpl<PlainStream>>(ioc, nullptr);
}

}  // namespace tessera::loadtest
