// PostJson and ParseHttpUrl against a one-shot HTTP receiver on loopback.
#include "server/http_post.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace tessera::server {
namespace {

using ::testing::HasSubstr;

// Accepts one connection, reads the request (headers + Content-Length
// body), answers `response` and closes.
class OneShotReceiver {
 public:
  explicit OneShotReceiver(std::string response)
      : response_(std::move(response)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    EXPECT_EQ(listen(fd_, 1), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneShotReceiver() {
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  uint16_t port() const { return port_; }
  // The request as received; waits for the exchange to end.
  std::string request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  void Serve() {
    int conn = accept(fd_, nullptr, nullptr);
    if (conn < 0) return;
    char buf[4096];
    for (;;) {
      const size_t head_end = request_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t cl = request_.find("Content-Length: ");
        size_t body =
            cl == std::string::npos ? 0 : std::stoul(request_.substr(cl + 16));
        if (request_.size() >= head_end + 4 + body) break;
      }
      ssize_t n = recv(conn, buf, sizeof(buf), 0);
      if (n <= 0) break;
      request_.append(buf, static_cast<size_t>(n));
    }
    if (!response_.empty()) {
      send(conn, response_.data(), response_.size(), MSG_NOSIGNAL);
    }
    close(conn);
  }

  std::string response_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::string request_;
  std::thread thread_;
};

TEST(HttpPostTest, PostsJsonAndReturnsTheStatus) {
  OneShotReceiver receiver("HTTP/1.1 204 No Content\r\n\r\n");
  const std::string url =
      "http://127.0.0.1:" + std::to_string(receiver.port()) + "/hooks/stop?x=1";
  Result<int> status = PostJson(url, R"({"shardId":"a"})", 2000);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(*status, 204);
  const std::string request = receiver.request();
  EXPECT_THAT(request,
              ::testing::StartsWith("POST /hooks/stop?x=1 HTTP/1.1\r\n"));
  EXPECT_THAT(request, HasSubstr("\r\nHost: 127.0.0.1:" +
                                 std::to_string(receiver.port()) + "\r\n"));
  EXPECT_THAT(request, HasSubstr("\r\nContent-Type: application/json\r\n"));
  EXPECT_THAT(request, HasSubstr("\r\nContent-Length: 15\r\n"));
  EXPECT_THAT(request, ::testing::EndsWith("\r\n\r\n{\"shardId\":\"a\"}"));
}

TEST(HttpPostTest, ErrorStatusesAndGarbage) {
  {
    OneShotReceiver receiver("HTTP/1.0 500 Internal Server Error\r\n\r\n");
    Result<int> status = PostJson(
        "http://127.0.0.1:" + std::to_string(receiver.port()), "{}", 2000);
    ASSERT_TRUE(status.ok());
    EXPECT_EQ(*status, 500);
  }
  {
    OneShotReceiver receiver("SSH-2.0-OpenSSH\r\n");
    Result<int> status = PostJson(
        "http://127.0.0.1:" + std::to_string(receiver.port()), "{}", 2000);
    EXPECT_EQ(status.status().code(), StatusCode::kIo);
  }
  {
    OneShotReceiver receiver("");  // closes without answering
    Result<int> status = PostJson(
        "http://127.0.0.1:" + std::to_string(receiver.port()), "{}", 2000);
    EXPECT_EQ(status.status().code(), StatusCode::kIo);
  }
}

TEST(HttpPostTest, ConnectionRefused) {
  uint16_t port;
  {
    OneShotReceiver receiver("HTTP/1.1 200 OK\r\n\r\n");
    port = receiver.port();
    ASSERT_TRUE(
        PostJson("http://127.0.0.1:" + std::to_string(port), "{}", 2000).ok());
  }
  Result<int> status =
      PostJson("http://127.0.0.1:" + std::to_string(port), "{}", 2000);
  EXPECT_EQ(status.status().code(), StatusCode::kIo);
  EXPECT_THAT(status.status().message(), HasSubstr("cannot connect"));
}

TEST(HttpPostTest, ParseHttpUrl) {
  Result<HttpUrl> u = ParseHttpUrl("http://example.com");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "example.com");
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");
  u = ParseHttpUrl("http://[::1]:8080/a/b?c=d#frag");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "[::1]");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/a/b?c=d");
  u = ParseHttpUrl("http://h?q=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->target, "/?q=1");
  for (const char* bad :
       {"https://example.com/", "ftp://x", "example.com", "http://",
        "http://:80/", "http://h:0/", "http://h:99999/", "http://h:8x/",
        "http://user:pw@h/"}) {
    EXPECT_EQ(ParseHttpUrl(bad).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace tessera::server
