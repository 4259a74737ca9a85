// The loopback floor: what it costs the kernel alone to send each of N
// clients one message per tick over loopback TCP, the least any game server
// sending 20 frames a second must spend (bench/compare/README.md).
//
//   loopback_floor --clients N --bytes B --rate HZ --seconds S [--sends K]
//
// A reader process connects N sockets and drains them (epoll); this
// process accepts them (TCP_NODELAY, non-blocking) and, R times a second,
// makes K send() calls of B bytes (the first; the others 16 bytes) on every
// socket. Prints one JSON line: the sending process's user and system CPU
// seconds (getrusage) over the sending, the sends made and refused
// (EAGAIN), and microseconds of CPU per send. On loopback the sender also
// pays for most of the receiving side's TCP processing, as a server does.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

struct Options {
  int clients = 1000;
  int bytes = 1000;
  int rate = 20;
  int seconds = 10;
  int sends = 1;
};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "loopback_floor: %s: %s\n", what.c_str(),
               std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void Usage(const std::string& error) {
  std::fprintf(stderr,
               "loopback_floor: %s\nusage: loopback_floor --clients N "
               "--bytes B --rate HZ --seconds S [--sends K]\n",
               error.c_str());
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) Usage(std::string(a) + " needs a value");
    const int v = std::atoi(argv[++i]);
    if (v <= 0) Usage(std::string(a) + " must be a positive integer");
    if (a == "--clients") {
      o.clients = v;
    } else if (a == "--bytes") {
      o.bytes = v;
    } else if (a == "--rate") {
      o.rate = v;
    } else if (a == "--seconds") {
      o.seconds = v;
    } else if (a == "--sends") {
      o.sends = v;
    } else {
      Usage("unknown argument " + std::string(a));
    }
  }
  return o;
}

// The reader: connects `n` sockets to `addr` and drains them until killed.
[[noreturn]] void Reader(const sockaddr_in& addr, int n) {
  const int ep = epoll_create1(0);
  if (ep < 0) Fail("epoll_create1");
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) Fail("socket");
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr)) {
      Fail("connect");
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) Fail("epoll_ctl");
  }
  static char buf[1 << 16];
  epoll_event events[256];
  for (;;) {
    const int k = epoll_wait(ep, events, 256, 1000);
    for (int i = 0; i < k; ++i) {
      while (read(events[i].data.fd, buf, sizeof buf) > 0) {
      }
    }
    if (getppid() == 1) std::exit(0);  // the sender is gone
  }
}

double Seconds(const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) Fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr)) {
    Fail("bind");
  }
  if (listen(listener, 4096)) Fail("listen");
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const pid_t reader = fork();
  if (reader < 0) Fail("fork");
  if (reader == 0) Reader(addr, o.clients);

  std::vector<int> conns;
  for (int i = 0; i < o.clients; ++i) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) Fail("accept");
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    conns.push_back(fd);
  }
  const std::string message(static_cast<size_t>(o.bytes), 'x');
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  long sent = 0;
  long refused = 0;
  const long ticks = static_cast<long>(o.rate) * o.seconds;
  for (long t = 0; t < ticks; ++t) {
    for (const int fd : conns) {
      for (int k = 0; k < o.sends; ++k) {
        const size_t n = k == 0 ? message.size() : 16;
        if (send(fd, message.data(), n, MSG_NOSIGNAL) < 0) {
          ++refused;
        } else {
          ++sent;
        }
      }
    }
    std::this_thread::sleep_until(
        start + std::chrono::microseconds(1'000'000 * (t + 1) / o.rate));
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  kill(reader, SIGKILL);
  waitpid(reader, nullptr, 0);
  const double user = Seconds(after.ru_utime) - Seconds(before.ru_utime);
  const double sys = Seconds(after.ru_stime) - Seconds(before.ru_stime);
  std::printf(
      "{\"clients\":%d,\"bytes\":%d,\"rate\":%d,\"seconds\":%d,"
      "\"sends_per_tick\":%d,\"sent\":%ld,\"refused\":%ld,\"user_s\":%.3f,"
      "\"sys_s\":%.3f,\"cpu_per_s\":%.4f,\"us_per_send\":%.3f}\n",
      o.clients, o.bytes, o.rate, o.seconds, o.sends, sent, refused, user, sys,
      (user + sys) / o.seconds, sent > 0 ? (user + sys) * 1e6 / sent : 0.0);
  return refused == 0 ? 0 : 1;
}
