#include "net/client/ws_client.h"

#include <boost/asio/post.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <type_traits>
#include <utility>

#include "net/client/streams.h"

namespace tessera::net::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

using PlainStream = websocket::stream<internal::PlainStream>;
using TlsStream = websocket::stream<internal::TlsStream>;

template <typename Stream>
class WsClientImpl final
    : public WsClient,
      public std::enable_shared_from_this<WsClientImpl<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  WsClientImpl(asio::io_context& ioc, asio::ssl::context* tls)
      : ws_(internal::MakeStream<Stream, kTls>(ioc, tls)) {}

  void Connect(const WsTarget& target, std::chrono::milliseconds timeout,
               std::function<void(Status)> done) override {
    target_ = target;
    connect_done_ = std::move(done);
    auto self = this->shared_from_this();
    beast::get_lowest_layer(ws_).expires_after(timeout);
    if (target.receive_buffer_bytes > 0) {
      beast::error_code ec;
      auto& socket = beast::get_lowest_layer(ws_).socket();
      socket.open(target.endpoint.protocol(), ec);
      if (!ec) {
        socket.set_option(
            asio::socket_base::receive_buffer_size(target.receive_buffer_bytes),
            ec);
      }
      if (ec) {
        return asio::post(ws_.get_executor(),
                          [self, ec] { self->ConnectFailed("SO_RCVBUF", ec); });
      }
    }
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

  const std::string& subprotocol() const override { return subprotocol_; }

  void Run(MessageFn on_message, ClosedFn on_closed) override {
    continuous_ = true;
    ReadOne(std::move(on_message), std::move(on_closed));
  }

  void ReadOne(MessageFn on_message, ClosedFn on_closed) override {
    on_message_ = std::move(on_message);
    on_closed_ = std::move(on_closed);
    if (ended_) return EndRead();
    Read();
  }

  void Send(std::string message, bool binary) override {
    if (ended_ || closing_ || write_failed_) return;
    outbox_.emplace_back(std::move(message), binary);
    if (!writing_) Write();
  }

  size_t queued() const override { return outbox_.size(); }
  uint64_t written() const override { return written_; }
  bool ended() const override { return ended_ || aborted_; }
  bool write_failed() const override { return write_failed_; }

  void Close() override {
    if (ended_ || closing_) return;
    closing_ = true;
    if (!writing_) StartClose();  // else Write() starts it when done
  }

  void Abort() override {
    aborted_ = true;
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }

 private:
  void ConnectFailed(std::string_view step, beast::error_code ec) {
    auto done = std::move(connect_done_);
    connect_done_ = nullptr;
    Abort();
    if (done) done(internal::StepFailed(step, ec));
  }

  void TlsHandshake() {
    if constexpr (kTls) {
      if (beast::error_code ec =
              internal::PrepareTls(ws_.next_layer(), target_.host)) {
        return ConnectFailed("tls", ec);
      }
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
    ws_.read_message_max(target_.max_message_bytes);
    ws_.set_option(websocket::stream_base::decorator(
        [subprotocol = target_.subprotocol](websocket::request_type& req) {
          if (!subprotocol.empty()) {
            req.set(beast::http::field::sec_websocket_protocol, subprotocol);
          }
        }));
    ws_.async_handshake(
        response_, target_.host_header, target_.path,
        [self = this->shared_from_this()](beast::error_code ec) {
          if (ec) {
            const unsigned status = self->response_.result_int();
            if (status == 0 || ec == beast::error::timeout) {
              return self->ConnectFailed("upgrade", ec);
            }
            return self->ConnectFailed("WebSocket upgrade refused (HTTP " +
                                           std::to_string(status) + ")",
                                       ec);
          }
          self->subprotocol_ = std::string(
              self->response_[beast::http::field::sec_websocket_protocol]);
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
        return self->End(kClosedAbnormally, ec.message());
      }
      const auto data = self->buffer_.cdata();
      const auto* bytes = static_cast<const uint8_t*>(data.data());
      const bool binary = self->ws_.got_binary();
      if (self->continuous_) {
        if (self->on_message_) self->on_message_(bytes, data.size(), binary);
      } else {
        self->on_closed_ = nullptr;
        MessageFn on_message = std::exchange(self->on_message_, nullptr);
        if (on_message) on_message(bytes, data.size(), binary);
      }
      self->buffer_.consume(data.size());
      if (self->continuous_ && !self->ended_) self->Read();
    });
  }

  // A read after the end: reports the end again.
  void EndRead() {
    on_message_ = nullptr;
    if (auto on_closed = std::exchange(on_closed_, nullptr)) {
      on_closed(end_code_, end_reason_);
    }
  }

  void End(int code, const std::string& reason) {
    if (ended_) return;
    ended_ = true;
    end_code_ = code;
    end_reason_ = reason;
    auto on_closed = std::move(on_closed_);
    on_closed_ = nullptr;
    on_message_ = nullptr;
    outbox_.clear();
    Abort();
    if (on_closed) on_closed(code, reason);
  }

  void Write() {
    writing_ = true;
    ws_.binary(outbox_.front().second);
    ws_.async_write(
        asio::buffer(outbox_.front().first),
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          self->writing_ = false;
          if (self->ended_) return;
          if (ec) {
            // The connection ends with the next read, with the peer's
            // close frame if one came.
            self->write_failed_ = true;
            self->outbox_.clear();
            if (self->closing_) self->StartClose();  // ends at once
            return;
          }
          ++self->written_;
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
    ws_.async_close(
        websocket::close_code::normal,
        [self = this->shared_from_this()](beast::error_code ec) {
          self->writing_ = false;
          // Without a read pending the close handshake reads the answer.
          const auto& reason = self->ws_.reason();
          self->End(ec && reason.code == 0 ? kClosedAbnormally : reason.code,
                    ec && reason.code == 0 ? ec.message()
                                           : std::string(reason.reason.data(),
                                                         reason.reason.size()));
        });
  }

  Stream ws_;
  WsTarget target_;
  beast::flat_buffer buffer_;
  std::function<void(Status)> connect_done_;
  MessageFn on_message_;
  ClosedFn on_closed_;
  websocket::response_type response_;
  std::string subprotocol_;
  bool continuous_ = false;
  std::deque<std::pair<std::string, bool>> outbox_;  // message, binary
  uint64_t written_ = 0;
  bool writing_ = false;
  bool closing_ = false;
  bool ended_ = false;
  bool aborted_ = false;
  bool write_failed_ = false;
  int end_code_ = 0;
  std::string end_reason_;
};

}  // namespace

std::shared_ptr<WsClient> WsClient::Create(asio::io_context& ioc,
                                           asio::ssl::context* tls) {
  if (tls != nullptr)
    return std::make_shared<WsClientImpl<TlsStream>>(ioc, tls);
  return std::make_shared<WsClientImpl<PlainStream>>(ioc, nullptr);
}

}  // namespace tessera::net::client
