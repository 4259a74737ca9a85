// The bots' WebSocket transport (ws:// or wss://), asynchronous on one
// io_context. Beast stays inside ws_client.cc.
//
// Threading: every method must be called on the io_context's thread, and
// the callbacks run there. Ownership: the client keeps itself alive while
// operations are pending; it drops its callbacks once the connection ended.
#ifndef TESSERA_LOADTEST_WS_CLIENT_H_
#define TESSERA_LOADTEST_WS_CLIENT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace tessera::loadtest {

struct WsTarget {
  boost::asio::ip::tcp::endpoint endpoint;  // where to connect (maybe a proxy)
  std::string host;         // for TLS (SNI and certificate check)
  std::string host_header;  // "host[:port]"
  std::string path;         // "/shard/<id>"
};

class WsClient {
 public:
  // A received binary or text message (valid during the call only).
  using MessageFn = std::function<void(const uint8_t* data, size_t size)>;
  // The connection ended: the peer's close code, or 1006 when it ended
  // without a close frame (then `reason` says why). Called once.
  using ClosedFn = std::function<void(int code, const std::string& reason)>;

  // `tls` null: ws://. The context must outlive the client.
  static std::shared_ptr<WsClient> Create(boost::asio::io_context& ioc,
                                          boost::asio::ssl::context* tls);
  virtual ~WsClient() = default;

  // TCP connect, TLS handshake, HTTP upgrade, all within `timeout`.
  // `done` gets kDeadlineExceeded, or kIo naming the step that failed.
  virtual void Connect(const WsTarget& target,
                       std::chrono::milliseconds timeout,
                       std::function<void(Status)> done) = 0;
  // Reads messages until the connection ends (after Connect succeeded).
  virtual void Run(MessageFn on_message, ClosedFn on_closed) = 0;
  // Queues one binary message.
  virtual void Send(std::string message) = 0;
  // Starts the close handshake (1000) after the queued messages; the
  // reading ends with the peer's answer (ClosedFn).
  virtual void Close() = 0;
  // Drops the TCP connection.
  virtual void Abort() = 0;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_WS_CLIENT_H_
