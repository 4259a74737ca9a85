// The one HTTP/1.1 client: blocking calls for the onStop notifier, the
// tests and the benchmarks (this header, no Boost), and the asynchronous
// call the load-test bots join with (http_async.h). Both run the same
// exchange (http_client.cc); Beast stays there. Blocking calls speak
// http:// only; the asynchronous one also https:// with a TLS context.
//
// Thread-safety: the free functions may be called from any thread; an
// HttpConnection from one thread at a time. Every call blocks for at most
// its timeout once the name is resolved (the resolver has its own).
#ifndef TESSERA_NET_CLIENT_HTTP_CLIENT_H_
#define TESSERA_NET_CLIENT_HTTP_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "net/client/url.h"

namespace tessera::net::client {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string target = "/";  // path and query
  HttpHeaders headers;       // besides Host, User-Agent, Content-Length
  std::string body;
  // false: "Connection: close", and the connection ends after the answer.
  bool keep_alive = false;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

// An HTTP/1.1 connection for several requests (keep-alive).
class HttpConnection {
 public:
  // Errors: kIo ("cannot connect to HOST:PORT: ..." or the resolver's
  // error), kDeadlineExceeded.
  static Result<std::unique_ptr<HttpConnection>> Connect(
      const std::string& host, uint16_t port, int timeout_ms = 5000);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends one request and reads its response (of any status). Errors: kIo
  // naming the step ("send: ...", "receive: ..."; e.g. the server closed
  // or did not speak HTTP), kDeadlineExceeded.
  Result<HttpResponse> Send(HttpRequest request, int timeout_ms = 5000);
  // As Send; `keep_alive` false asks the server to close afterwards.
  Result<HttpResponse> Request(std::string_view method, std::string_view target,
                               std::string_view body = "",
                               const HttpHeaders& headers = {},
                               bool keep_alive = true, int timeout_ms = 5000);

 private:
  struct Impl;
  explicit HttpConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One request on a fresh connection (Connection: close). Errors: as
// HttpConnection's Connect and Send.
Result<HttpResponse> HttpCall(const std::string& host, uint16_t port,
                              std::string_view method, std::string_view target,
                              std::string_view body = "",
                              const HttpHeaders& headers = {},
                              int timeout_ms = 5000);

// POSTs `body` as application/json to the http:// `url` within
// `timeout_ms` and returns the response's status code. Errors:
// kInvalidArgument for a bad or non-http:// URL, else as HttpCall.
Result<int> PostJson(std::string_view url, const std::string& body,
                     int timeout_ms);

}  // namespace tessera::net::client

#endif  // TESSERA_NET_CLIENT_HTTP_CLIENT_H_
