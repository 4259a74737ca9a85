// A small synchronous WebSocket client of protocol v1 (docs/protocol.md) and
// a one-shot HTTP call, for tests of the in-process server and end-to-end
// tests of the real binary. Every call takes a timeout and never blocks
// longer. Beast stays inside test_client.cc.
//
// Threading: one TestClient per thread (it runs its own io_context on the
// calling thread).
#ifndef TESSERA_TESTS_NET_TEST_CLIENT_H_
#define TESSERA_TESTS_NET_TEST_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "net/protocol_v1.h"

namespace tessera::net::testing {

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
  // Offered in Sec-WebSocket-Protocol when non-empty.
  std::string subprotocol;
  int timeout_ms = 5000;  // connect + upgrade
  size_t max_message_bytes = 32 << 20;
  // SO_RCVBUF before connecting when > 0 (to simulate a slow reader).
  int receive_buffer_bytes = 0;
  // HELLO flags Join sends (v1::kHelloFrameAcks, ...).
  uint64_t hello_flags = 0;
};

class TestClient {
 public:
  // Connects to ws://host:port/shard/<percent-encoded shard_id>. Errors:
  // kIo (refused, upgrade refused with the HTTP status in the message),
  // kDeadlineExceeded.
  static Result<std::unique_ptr<TestClient>> Connect(
      const ClientOptions& options, std::string_view shard_id);
  // As Connect, with a raw request target (e.g. "/shard/a%2Fb?x").
  static Result<std::unique_ptr<TestClient>> ConnectTarget(
      const ClientOptions& options, std::string_view target);
  // Drops the TCP connection without a close handshake.
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  // The subprotocol the server chose ("" if none).
  const std::string& subprotocol() const;

  // Sends one binary (or text) message. Errors: kIo, kDeadlineExceeded.
  Status Send(std::string_view bytes, int timeout_ms = 5000);
  Status SendText(std::string_view text, int timeout_ms = 5000);
  Status SendHello(std::string_view ticket, uint64_t version = v1::kVersion,
                   uint64_t flags = 0);
  Status SendInput(uint64_t seq, std::string_view payload,
                   std::optional<uint64_t> view_tick = std::nullopt);
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
  explicit TestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

template <typename T>
Result<T> TestClient::ReadUntil(int timeout_ms) {
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

// "a/b c" -> "a%2Fb%20c": everything but RFC 3986 unreserved characters.
std::string PercentEncode(std::string_view text);

struct HttpResult {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

// An HTTP/1.1 connection for several requests (keep-alive).
class HttpConnection {
 public:
  // Errors: kIo, kDeadlineExceeded.
  static Result<std::unique_ptr<HttpConnection>> Connect(
      const std::string& host, uint16_t port, int timeout_ms = 5000);
  ~HttpConnection();
  // Sends one request and reads its response. `keep_alive` false asks the
  // server to close afterwards. Errors: kIo (e.g. the server closed),
  // kDeadlineExceeded.
  Result<HttpResult> Request(
      std::string_view method, std::string_view target,
      std::string_view body = "",
      const std::vector<std::pair<std::string, std::string>>& headers = {},
      bool keep_alive = true, int timeout_ms = 5000);

 private:
  struct Impl;
  explicit HttpConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One HTTP/1.1 request on a fresh connection (Connection: close).
// `headers` are extra request headers. Errors: kIo, kDeadlineExceeded.
Result<HttpResult> HttpCall(
    const std::string& host, uint16_t port, std::string_view method,
    std::string_view target, std::string_view body = "",
    const std::vector<std::pair<std::string, std::string>>& headers = {},
    int timeout_ms = 5000);

}  // namespace tessera::net::testing

#endif  // TESSERA_TESTS_NET_TEST_CLIENT_H_
