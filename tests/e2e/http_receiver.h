// A tiny blocking HTTP/1.1 server on a thread of the test, standing in for
// an app's backend that receives onStop POSTs. It answers each request
// (one per connection) and records it.
//
// Threading: the accept loop runs on its own thread; every public method
// may be called from any thread.
#ifndef TESSERA_TESTS_E2E_HTTP_RECEIVER_H_
#define TESSERA_TESTS_E2E_HTTP_RECEIVER_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace tessera::e2e {

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::string body;
};

class HttpReceiver {
 public:
  // Listens on 127.0.0.1 at an ephemeral port. The first `failures`
  // requests are answered 503, the others 200. Errors: kIo.
  static Result<std::unique_ptr<HttpReceiver>> Start(int failures = 0);
  // Stops the thread and closes the socket.
  ~HttpReceiver();
  HttpReceiver(const HttpReceiver&) = delete;
  HttpReceiver& operator=(const HttpReceiver&) = delete;

  uint16_t port() const { return port_; }

  // Waits until at least `count` requests arrived (or the timeout) and
  // returns every request so far.
  std::vector<ReceivedRequest> WaitFor(size_t count, int timeout_ms);

 private:
  HttpReceiver(int listen_fd, int stop_read_fd, int stop_write_fd,
               uint16_t port, int failures);
  void Run();
  void Serve(int fd);

  const int listen_fd_;
  const int stop_read_fd_;
  const int stop_write_fd_;
  const uint16_t port_;
  const int failures_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ReceivedRequest> requests_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tessera::e2e

#endif  // TESSERA_TESTS_E2E_HTTP_RECEIVER_H_
