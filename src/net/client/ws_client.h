// The WebSocket transport of the protocol-v1 clients (ws:// or wss://),
// asynchronous on one io_context. Beast stays inside ws_client.cc.
//
// Reading is either continuous (Run: the load-test and benchmark bots) or
// one message at a time (ReadOne: the blocking client, which must not read
// ahead so that a test can play a slow reader).
//
// Threading: every method must be called on the io_context's thread, and
// the callbacks run there. Ownership: the client keeps itself alive while
// operations are pending; it drops its callbacks once the connection ended.
#ifndef TESSERA_NET_CLIENT_WS_CLIENT_H_
#define TESSERA_NET_CLIENT_WS_CLIENT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "net/client/tls_context.h"

namespace tessera::net::client {

struct WsTarget {
  boost::asio::ip::tcp::endpoint endpoint;  // where to connect (maybe a proxy)
  std::string host;         // for TLS (SNI and certificate check)
  std::string host_header;  // "host[:port]"
  std::string path;         // "/shard/<id>", with any query
  std::string subprotocol;  // offered in Sec-WebSocket-Protocol when set
  size_t max_message_bytes = 32 << 20;
  int receive_buffer_bytes = 0;  // SO_RCVBUF before connecting when > 0
};

// The code ClosedFn reports when the connection ended without a close frame.
inline constexpr int kClosedAbnormally = 1006;

class WsClient {
 public:
  // A received message (valid during the call only); `binary` false for a
  // text message.
  using MessageFn =
      std::function<void(const uint8_t* data, size_t size, bool binary)>;
  // The connection ended: the peer's close code, or kClosedAbnormally when
  // it ended without a close frame (then `reason` says why). Called once.
  using ClosedFn = std::function<void(int code, const std::string& reason)>;

  // `tls` null: ws://. The context must outlive the client.
  static std::shared_ptr<WsClient> Create(boost::asio::io_context& ioc,
                                          boost::asio::ssl::context* tls);
  virtual ~WsClient() = default;

  // TCP connect, TLS handshake, HTTP upgrade, all within `timeout`.
  // `done` gets kDeadlineExceeded, or kIo naming the step that failed
  // ("connect: ...", "tls: ...", "WebSocket upgrade refused (HTTP 404):
  // ...").
  virtual void Connect(const WsTarget& target,
                       std::chrono::milliseconds timeout,
                       std::function<void(Status)> done) = 0;
  // The subprotocol the server chose ("" if none), once connected.
  virtual const std::string& subprotocol() const = 0;
  // Reads messages until the connection ends (after Connect succeeded).
  virtual void Run(MessageFn on_message, ClosedFn on_closed) = 0;
  // Reads one message: calls `on_message` or, if the connection ends
  // first, `on_closed`. At most one read at a time; not with Run.
  virtual void ReadOne(MessageFn on_message, ClosedFn on_closed) = 0;
  // Queues one message (binary unless `binary` is false).
  virtual void Send(std::string message, bool binary = true) = 0;
  // Messages queued and not yet written, and written so far.
  virtual size_t queued() const = 0;
  virtual uint64_t written() const = 0;
  // Starts the close handshake (1000) after the queued messages; the
  // connection ends with the peer's answer (ClosedFn of a pending read).
  virtual void Close() = 0;
  // Drops the TCP connection.
  virtual void Abort() = 0;
  // The connection ended (closed, failed or aborted).
  virtual bool ended() const = 0;
  // A write failed: nothing more is sent, and the next read ends.
  virtual bool write_failed() const = 0;
};

}  // namespace tessera::net::client

#endif  // TESSERA_NET_CLIENT_WS_CLIENT_H_
