#include "tests/e2e/http_receiver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace tessera::e2e {
namespace {

constexpr int kReadTimeoutMs = 5000;
constexpr size_t kMaxRequestBytes = 1 << 20;

// The Content-Length of `head` (the request line and headers), 0 if none.
size_t ContentLength(const std::string& head) {
  static const char kName[] = "\r\ncontent-length:";
  const size_t name_len = sizeof(kName) - 1;
  for (size_t i = 0; i + name_len <= head.size(); ++i) {
    if (strncasecmp(head.data() + i, kName, name_len) == 0) {
      return std::strtoul(head.c_str() + i + name_len, nullptr, 10);
    }
  }
  return 0;
}

// Reads one request from `fd`; false on a timeout, error or early close.
bool ReadRequest(int fd, ReceivedRequest* out) {
  std::string data;
  size_t head_end = std::string::npos;
  size_t need = 0;
  char buf[4096];
  for (;;) {
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        need = head_end + 4 + ContentLength(data.substr(0, head_end + 2));
      }
    }
    if (head_end != std::string::npos && data.size() >= need) break;
    if (data.size() > kMaxRequestBytes) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kReadTimeoutMs) <= 0) return false;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return false;
    data.append(buf, static_cast<size_t>(n));
  }
  const std::string line = data.substr(0, data.find("\r\n"));
  const size_t sp1 = line.find(' ');
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) return false;
  out->method = line.substr(0, sp1);
  out->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  out->body = data.substr(head_end + 4, need - head_end - 4);
  return true;
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Result<std::unique_ptr<HttpReceiver>> HttpReceiver::Start(int failures) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int pipe_fds[2];
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const std::string error = std::strerror(errno);
    close(fd);
    return IoError("receiver: " + error);
  }
  std::unique_ptr<HttpReceiver> receiver(new HttpReceiver(
      fd, pipe_fds[0], pipe_fds[1], ntohs(addr.sin_port), failures));
  receiver->thread_ = std::thread([r = receiver.get()] { r->Run(); });
  return receiver;
}

HttpReceiver::HttpReceiver(int listen_fd, int stop_read_fd, int stop_write_fd,
                           uint16_t port, int failures)
    : listen_fd_(listen_fd),
      stop_read_fd_(stop_read_fd),
      stop_write_fd_(stop_write_fd),
      port_(port),
      failures_(failures) {}

HttpReceiver::~HttpReceiver() {
  const char byte = 1;
  if (write(stop_write_fd_, &byte, 1) < 0) {
    // Nothing to do: the thread is then stuck; the join below shows it.
  }
  thread_.join();
  close(listen_fd_);
  close(stop_read_fd_);
  close(stop_write_fd_);
}

void HttpReceiver::Run() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_read_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Serve(fd);
    close(fd);
  }
}

void HttpReceiver::Serve(int fd) {
  ReceivedRequest request;
  if (!ReadRequest(fd, &request)) return;
  bool fail = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fail = static_cast<int>(requests_.size()) < failures_;
    requests_.push_back(request);
  }
  cv_.notify_all();
  WriteAll(fd, fail ? "HTTP/1.1 503 Service Unavailable\r\n"
                      "Content-Length: 0\r\nConnection: close\r\n\r\n"
                    : "HTTP/1.1 200 OK\r\n"
                      "Content-Length: 0\r\nConnection: close\r\n\r\n");
}

std::vector<ReceivedRequest> HttpReceiver::WaitFor(size_t count,
                                                   int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
               [&] { return requests_.size() >= count; });
  return requests_;
}

}  // namespace tessera::e2e
