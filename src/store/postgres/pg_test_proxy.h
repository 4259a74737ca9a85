// Tests only: a TCP proxy in front of a server on loopback that can be
// told to hang: it keeps accepting and keeps every connection open, but
// forwards nothing either way while hung (a database that stops answering
// without closing anything, the case no error path catches). Header-only.
#ifndef TESSERA_STORE_POSTGRES_PG_TEST_PROXY_H_
#define TESSERA_STORE_POSTGRES_PG_TEST_PROXY_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tessera::store::pg {

class HangingProxy {
 public:
  // Listens on 127.0.0.1 (port()) and forwards to 127.0.0.1:target_port.
  explicit HangingProxy(int target_port) : target_port_(target_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) !=
            0 ||
        listen(listen_fd_, 64) != 0) {
      return;
    }
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~HangingProxy() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (auto& [a, b] : pairs_) {
      if (a >= 0) close(a);
      if (b >= 0) close(b);
    }
    close(listen_fd_);
  }
  HangingProxy(const HangingProxy&) = delete;
  HangingProxy& operator=(const HangingProxy&) = delete;

  int port() const { return port_; }
  void set_hung(bool hung) { hung_ = hung; }
  // A postgres URL through the proxy, for the database `name`.
  std::string Url(const std::string& name) const {
    return "postgresql://test@127.0.0.1:" + std::to_string(port_) + "/" + name;
  }

 private:
  void Run() {
    std::vector<char> buf(1 << 16);
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      if (!hung_) {
        for (auto& [a, b] : pairs_) {
          fds.push_back({a, POLLIN, 0});  // -1 (closed) is skipped by poll
          fds.push_back({b, POLLIN, 0});
        }
      }
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) Accept();
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        auto& pair = pairs_[(i - 1) / 2];
        if (pair.first < 0) continue;
        const int to = fds[i].fd == pair.first ? pair.second : pair.first;
        const ssize_t n = read(fds[i].fd, buf.data(), buf.size());
        if (n > 0) {
          size_t sent = 0;
          while (sent < static_cast<size_t>(n)) {
            const ssize_t w = write(to, buf.data() + sent, n - sent);
            if (w <= 0) break;
            sent += static_cast<size_t>(w);
          }
        } else {  // either side closed: close both
          close(pair.first);
          close(pair.second);
          pair = {-1, -1};
        }
      }
    }
  }
  void Accept() {
    const int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) return;
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(target_port_));
    if (connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(server);
      close(client);
      return;
    }
    pairs_.emplace_back(client, server);
  }

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> hung_{false};
  std::atomic<bool> stop_{false};
  std::vector<std::pair<int, int>> pairs_;  // only the proxy's thread
  std::thread thread_;
};

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_TEST_PROXY_H_
