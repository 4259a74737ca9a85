#include "loadtest/delay_proxy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <thread>

namespace tessera::loadtest {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// An echo server on its own io thread.
class EchoServer {
 public:
  EchoServer()
      : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    Accept();
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~EchoServer() {
    ioc_.stop();
    thread_.join();
  }
  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

 private:
  struct Session : std::enable_shared_from_this<Session> {
    explicit Session(tcp::socket s) : socket(std::move(s)) {}
    void Read() {
      socket.async_read_some(
          asio::buffer(buffer),
          [self = shared_from_this()](boost::system::error_code ec, size_t n) {
            if (ec) {
              boost::system::error_code ignored;
              self->socket.shutdown(tcp::socket::shutdown_send, ignored);
              return;
            }
            asio::async_write(self->socket, asio::buffer(self->buffer, n),
                              [self](boost::system::error_code ec, size_t) {
                                if (!ec) self->Read();
                              });
          });
    }
    tcp::socket socket;
    char buffer[4096];
  };

  void Accept() {
    acceptor_.async_accept(
        [this](boost::system::error_code ec, tcp::socket socket) {
          if (ec) return;
          std::make_shared<Session>(std::move(socket))->Read();
          Accept();
        });
  }

  asio::io_context ioc_{1};
  tcp::acceptor acceptor_;
  std::thread thread_;
};

// A proxy running on two io threads for the test's lifetime.
class ProxyFixture {
 public:
  explicit ProxyFixture(DelayProxyOptions options)
      : guard_a_(asio::make_work_guard(a_)),
        guard_b_(asio::make_work_guard(b_)) {
    Result<std::unique_ptr<DelayProxy>> proxy =
        DelayProxy::Start({&a_, &b_}, options);
    EXPECT_TRUE(proxy.ok()) << proxy.status().ToString();
    if (proxy.ok()) proxy_ = std::move(*proxy);
    thread_a_ = std::thread([this] { a_.run(); });
    thread_b_ = std::thread([this] { b_.run(); });
  }
  ~ProxyFixture() {
    if (proxy_) proxy_->Stop();
    // What Stop posted, and what that completes, runs before these.
    for (int round = 0; round < 2; ++round) {
      RunPosted(a_);
      RunPosted(b_);
    }
    guard_a_.reset();
    guard_b_.reset();
    a_.stop();
    b_.stop();
    thread_a_.join();
    thread_b_.join();
    proxy_.reset();
  }
  DelayProxy* proxy() { return proxy_.get(); }

 private:
  // Returns once `ioc` (run by its thread) ran what was posted before.
  static void RunPosted(asio::io_context& ioc) {
    std::promise<void> ran;
    std::future<void> done = ran.get_future();
    asio::post(ioc, [&ran] { ran.set_value(); });
    done.wait();
  }

  asio::io_context a_{1}, b_{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard_a_, guard_b_;
  std::unique_ptr<DelayProxy> proxy_;
  std::thread thread_a_, thread_b_;
};

double RoundTripMs(tcp::socket& socket, const std::string& message) {
  const auto start = Clock::now();
  asio::write(socket, asio::buffer(message));
  std::string back(message.size(), '\0');
  asio::read(socket, asio::buffer(back));
  EXPECT_EQ(back, message);
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

TEST(DelayProxyTest, DelaysEachDirection) {
  EchoServer echo;
  DelayProxyOptions options;
  options.target = echo.endpoint();
  options.delay = std::chrono::milliseconds(40);
  ProxyFixture fixture(options);
  ASSERT_NE(fixture.proxy(), nullptr);
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(fixture.proxy()->endpoint());
  for (int i = 0; i < 3; ++i) {
    // Never faster than the delay each way (how much slower depends on
    // the machine; DrawDelayStaysInBounds checks the delays themselves).
    EXPECT_GE(RoundTripMs(socket, "ping " + std::to_string(i)), 80.0);
  }
  EXPECT_EQ(fixture.proxy()->connections(), 1u);
}

TEST(DelayProxyTest, JitterStaysInBoundsAndKeepsOrder) {
  EchoServer echo;
  DelayProxyOptions options;
  options.target = echo.endpoint();
  options.delay = std::chrono::milliseconds(30);
  options.jitter = std::chrono::milliseconds(20);
  options.seed = 99;
  ProxyFixture fixture(options);
  ASSERT_NE(fixture.proxy(), nullptr);
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(fixture.proxy()->endpoint());
  socket.set_option(tcp::no_delay(true));

  // Round trips: each way at least 10 ms (the upper bound is checked on
  // the delays themselves: DrawDelayStaysInBounds).
  double low = 1e9;
  for (int i = 0; i < 15; ++i) {
    low = std::min(low, RoundTripMs(socket, "x" + std::to_string(i)));
  }
  EXPECT_GE(low, 20.0);

  // Many small writes in quick succession, each delayed at random, come
  // back in the order they were sent.
  std::string sent;
  for (int i = 0; i < 300; ++i) {
    const std::string piece = "<" + std::to_string(i) + ">";
    asio::write(socket, asio::buffer(piece));
    sent += piece;
    if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string back(sent.size(), '\0');
  asio::read(socket, asio::buffer(back));
  EXPECT_EQ(back, sent);
}

TEST(DelayProxyTest, EndOfStreamIsPassedOn) {
  EchoServer echo;
  DelayProxyOptions options;
  options.target = echo.endpoint();
  options.delay = std::chrono::milliseconds(5);
  ProxyFixture fixture(options);
  ASSERT_NE(fixture.proxy(), nullptr);
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(fixture.proxy()->endpoint());
  asio::write(socket, asio::buffer(std::string("last words")));
  socket.shutdown(tcp::socket::shutdown_send);
  std::string back;
  boost::system::error_code ec;
  char buffer[64];
  for (;;) {
    const size_t n = socket.read_some(asio::buffer(buffer), ec);
    if (ec) break;
    back.append(buffer, n);
  }
  EXPECT_EQ(back, "last words");
  EXPECT_EQ(ec, asio::error::eof);
}

TEST(DelayProxyTest, DrawDelayStaysInBounds) {
  DelayProxyOptions options;
  options.delay = std::chrono::milliseconds(30);
  options.jitter = std::chrono::milliseconds(20);
  std::mt19937_64 rng(99);
  auto low = std::chrono::microseconds::max();
  auto high = std::chrono::microseconds::min();
  for (int i = 0; i < 10000; ++i) {
    const std::chrono::microseconds d = DrawDelay(options, rng);
    low = std::min(low, d);
    high = std::max(high, d);
  }
  EXPECT_GE(low, std::chrono::milliseconds(10));
  EXPECT_LE(high, std::chrono::milliseconds(50));
  EXPECT_LT(low, std::chrono::milliseconds(11)) << "spread over the range";
  EXPECT_GT(high, std::chrono::milliseconds(49));

  options.delay = std::chrono::milliseconds(5);
  options.jitter = std::chrono::milliseconds(10);  // never negative
  for (int i = 0; i < 1000; ++i) {
    EXPECT_GE(DrawDelay(options, rng).count(), 0);
  }
  options.jitter = std::chrono::microseconds(0);
  EXPECT_EQ(DrawDelay(options, rng), std::chrono::milliseconds(5));
}

TEST(DelayProxyTest, RefusesNegativeDelays) {
  asio::io_context ioc;
  DelayProxyOptions options;
  options.delay = std::chrono::milliseconds(-1);
  EXPECT_FALSE(DelayProxy::Start({&ioc}, options).ok());
}

}  // namespace
}  // namespace tessera::loadtest
