// A blocking protocol-v1 WebSocket client (docs/protocol.md), for tests of
// the in-process server, end-to-end tests of the real binary and the
// benchmarks' setup. Every call takes a timeout and never blocks much
// longer. It reads only when asked (Read*), so a test can play a slow
// reader. Built on WsClient (ws:// or wss://) and a private io_context.
//
// Threading: one BlockingClient per thread (it runs its own io_context on
// the calling thread).
#ifndef TESSERA_NET_CLIENT_BLOCKING_CLIENT_H_
#define TESSERA_NET_CLIENT_BLOCKING_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"
#include "net/client/tls_context.h"
#include "net/protocol_v1.h"

namespace tessera::net::client {

// How the connection ended.
struct CloseInfo {
  int code = 0;  // from the server's close frame; 0 if there was none
  std::string reason;
};

// One read: a message, or the end of the connection.
struct ClientEvent {
  bool closed = false;
  CloseInfo close;     // when closed
  bool binary = true;  // when a message
  std::string bytes;   // when a message
};

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  // wss:// when set (it must outlive the client); `host` is the name the
  // certificate must carry.
  boost::asio::ssl::context* tls = nullptr;
  // Offered in Sec-WebSocket-Protocol when non-empty.
  std::string subprotocol;
  int timeout_ms = 5000;  // connect + upgrade
  size_t max_message_bytes = 32 << 20;
  // SO_RCVBUF before connecting when > 0 (to simulate a slow reader).
  int receive_buffer_bytes = 0;
  // HELLO flags Join sends (v1::kHelloFrameAcks, ...).
  uint64_t hello_flags = 0;
};

class BlockingClient {
 public:
  // Connects to ws://host:port/shard/<percent-encoded shard_id>. Errors:
  // kIo (refused, upgrade refused with the HTTP status in the message),
  // kDeadlineExceeded.
  static Result<std::unique_ptr<BlockingClient>> Connect(
      const ClientOptions& options, std::string_view shard_id);
  // As Connect, with a raw request target (e.g. "/shard/a%2Fb?x").
  static Result<std::unique_ptr<BlockingClient>> ConnectTarget(
      const ClientOptions& options, std::string_view target);
  // Drops the TCP connection without a close handshake.
  ~BlockingClient();
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;

  // The subprotocol the server chose ("" if none).
  const std::string& subprotocol() const;

  // Sends one binary (or text) message. Errors: kIo, kDeadlineExceeded
  // (then the connection is dropped: a write cannot be abandoned).
  Status Send(std::string_view bytes, int timeout_ms = 5000);
  Status SendText(std::string_view text, int timeout_ms = 5000);
  Status SendHello(std::string_view ticket, uint64_t version = v1::kVersion,
                   uint64_t flags = 0);
  // `view_tick`: the (fractional) tick drawn, as v1::EncodeInput takes it.
  Status SendInput(uint64_t seq, std::string_view payload,
                   std::optional<double> view_tick = std::nullopt);
  Status SendPing(uint64_t nonce);
  Status SendPong(uint64_t nonce);

  // The next message or the close. kDeadlineExceeded when nothing arrived
  // in time (the read stays pending; the next call continues it). After the
  // close every call returns the same closed event.
  Result<ClientEvent> Read(int timeout_ms = 5000);
  // The next message, decoded. Errors: kDeadlineExceeded; kIo naming the
  // close code and reason if the connection closed; kInvalidArgument if
  // the message does not decode.
  Result<v1::ServerMessage> ReadMessage(int timeout_ms = 5000);
  // Reads until a message of type T (skipping others), within timeout_ms.
  template <typename T>
  Result<T> ReadUntil(int timeout_ms = 5000);
  // Skips messages until the connection ends; returns its close.
  Result<CloseInfo> WaitClose(int timeout_ms = 5000);

  // Sends HELLO and reads until WELCOME. Errors: as ReadMessage (a refused
  // ticket is a kIo error carrying the close code).
  Result<v1::Welcome> Join(std::string_view ticket, int timeout_ms = 5000);

  // Starts the close handshake (1000) and waits for its end.
  Status Close(int timeout_ms = 2000);
  bool closed() const;

 private:
  struct Impl;
  explicit BlockingClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

template <typename T>
Result<T> BlockingClient::ReadUntil(int timeout_ms) {
  // A coarse deadline: each ReadMessage gets what is left.
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const int elapsed =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count());
    if (elapsed >= timeout_ms) {
      return Status(StatusCode::kDeadlineExceeded, "no such message in time");
    }
    Result<v1::ServerMessage> msg = ReadMessage(timeout_ms - elapsed);
    if (!msg.ok()) return msg.status();
    if (auto* m = std::get_if<T>(&msg.value())) return std::move(*m);
  }
}

}  // namespace tessera::net::client

#endif  // TESSERA_NET_CLIENT_BLOCKING_CLIENT_H_
