#include "server/http_post.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

namespace tessera::server {
namespace {

// Closes the descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string Errno(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// Waits for `events` on `fd` until `deadline`. Errors: kIo on timeout.
Status WaitFor(int fd, short events,
               std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return IoError("timed out");
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return Status::Ok();
    if (n == 0) return IoError("timed out");
    if (errno != EINTR) return IoError(Errno("poll"));
  }
}

Result<int> Connect(const HttpUrl& url,
                    std::chrono::steady_clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string host = url.host;
  if (host.size() > 2 && host.front() == '[')
    host = host.substr(1, host.size() - 2);
  const std::string port = std::to_string(url.port);
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    return IoError("cannot resolve " + url.host + ": " + gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    a->ai_protocol);
    if (fd < 0) {
      last_error = Errno("socket");
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
      Status ready = WaitFor(fd, POLLOUT, deadline);
      int so_error = 0;
      socklen_t len = sizeof(so_error);
      if (ready.ok() &&
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 &&
          so_error == 0) {
        freeaddrinfo(found);
        return fd;
      }
      last_error = ready.ok()
                       ? std::string("connect: ") + std::strerror(so_error)
                       : "connect: " + ready.message();
    } else {
      last_error = Errno("connect");
    }
    close(fd);
  }
  freeaddrinfo(found);
  return IoError("cannot connect to " + url.host + ":" + port + ": " +
                 last_error);
}

}  // namespace

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return InvalidArgument("\"" + std::string(url) +
                           "\" is not an http:// URL");
  }
  std::string_view rest = url.substr(kScheme.size());
  const size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  HttpUrl out;
  if (slash != std::string_view::npos) {
    std::string_view target = rest.substr(slash);
    target = target.substr(0, target.find('#'));
    out.target = target.empty() || target.front() != '/'
                     ? "/" + std::string(target)
                     : std::string(target);
  }
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument("credentials in a URL are not supported: " +
                           std::string(url));
  }
  // Split off a port after the host ("[::1]:80" keeps its brackets).
  size_t colon = authority.rfind(':');
  const size_t bracket = authority.rfind(']');
  if (colon != std::string_view::npos &&
      (bracket == std::string_view::npos || colon > bracket)) {
    std::string_view port = authority.substr(colon + 1);
    unsigned value = 0;
    auto [end, ec] =
        std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 ||
        value > 65535) {
      return InvalidArgument("bad port in " + std::string(url));
    }
    out.port = static_cast<uint16_t>(value);
    authority = authority.substr(0, colon);
  }
  if (authority.empty())
    return InvalidArgument("no host in " + std::string(url));
  out.host = std::string(authority);
  return out;
}

Result<int> PostJson(const std::string& url_text, const std::string& body,
                     int timeout_ms) {
  Result<HttpUrl> url = ParseHttpUrl(url_text);
  if (!url.ok()) return url.status();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Result<int> connected = Connect(*url, deadline);
  if (!connected.ok()) return connected.status();
  Fd fd(*connected);

  std::string host_header = url->host;
  if (url->port != 80) host_header += ":" + std::to_string(url->port);
  const std::string request =
      "POST " + url->target + " HTTP/1.1\r\nHost: " + host_header +
      "\r\nUser-Agent: tessera\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd.get(), request.data() + sent, request.size() - sent,
                     MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      Status ready = WaitFor(fd.get(), POLLOUT, deadline);
      if (!ready.ok()) return IoError("send: " + ready.message());
    } else if (n < 0 && errno != EINTR) {
      return IoError(Errno("send"));
    }
  }

  // Only the status line matters: "HTTP/1.1 204 No Content\r\n".
  std::string head;
  while (head.find("\r\n") == std::string::npos && head.size() < 4096) {
    char buf[1024];
    ssize_t n = recv(fd.get(), buf, sizeof(buf), 0);
    if (n > 0) {
      head.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      Status ready = WaitFor(fd.get(), POLLIN, deadline);
      if (!ready.ok())
        return IoError("waiting for the response: " + ready.message());
    } else if (errno != EINTR) {
      return IoError(Errno("recv"));
    }
  }
  int status = 0;
  if (head.size() < 12 || head.compare(0, 5, "HTTP/") != 0) {
    return IoError("the response is not HTTP");
  }
  const size_t space = head.find(' ');
  if (space == std::string::npos || space + 4 > head.size()) {
    return IoError("the response has no status code");
  }
  auto [end, ec] =
      std::from_chars(head.data() + space + 1, head.data() + space + 4, status);
  if (ec != std::errc() || end != head.data() + space + 4 || status < 100 ||
      status > 599) {
    return IoError("the response has no status code");
  }
  return status;
}

}  // namespace tessera::server
