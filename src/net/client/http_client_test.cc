// The HTTP client (http_client.h, http_async.h) against a one-shot HTTP
// receiver on loopback and fake_shard_server's POST /join, plain and TLS.
#include "net/client/http_client.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ssl/context.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "net/client/fake_shard_server.h"
#include "net/client/http_async.h"

namespace tessera::net::client {
namespace {

using ::testing::HasSubstr;

// Accepts one connection, reads the request (headers + Content-Length
// body), answers `response` and closes; or with `hold`, answers nothing
// and waits for the client to close.
class OneShotReceiver {
 public:
  explicit OneShotReceiver(std::string response, bool hold = false)
      : response_(std::move(response)), hold_(hold) {
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
    while (hold_ && recv(conn, buf, sizeof(buf), 0) > 0) {
    }
    close(conn);
  }

  std::string response_;
  const bool hold_;
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

TEST(HttpPostTest, OnlyHttpUrls) {
  for (const char* bad : {"https://example.com/", "ws://h/", "ftp://x",
                          "example.com", "http://", "http://h:99999/"}) {
    EXPECT_EQ(PostJson(bad, "{}", 2000).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(HttpClientTest, CallReturnsStatusHeadersAndBody) {
  testing::FakeShardServer server(testing::FakeServerOptions{});
  Result<HttpResponse> r = HttpCall("127.0.0.1", server.port(), "POST", "/join",
                                    R"({"shard":"s","subscriber":"bot-1"})",
                                    {{"Content-Type", "application/json"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->headers["content-type"], "application/json");
  EXPECT_EQ(nlohmann::json::parse(r->body)["subscriberId"], "bot-1");
  r = HttpCall("127.0.0.1", server.port(), "POST", "/join",
               R"({"shard":"refuse"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
}

TEST(HttpClientTest, ConnectionKeepsNothingAfterAClose) {
  OneShotReceiver receiver(
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
  auto connection = HttpConnection::Connect("127.0.0.1", receiver.port());
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  Result<HttpResponse> r = (*connection)->Request("GET", "/x");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "hi");
  EXPECT_THAT(receiver.request(), ::testing::StartsWith("GET /x HTTP/1.1"));
  EXPECT_FALSE((*connection)->Request("GET", "/y").ok());
}

// The asynchronous call over TLS: trusted, untrusted, and a timeout.
TEST(HttpClientTest, AsyncCallOverTls) {
  testing::FakeServerOptions options;
  options.tls = true;
  testing::FakeShardServer server(options);
  const Url url =
      ParseUrl("https://localhost:" + std::to_string(server.port()) + "/join")
          .value();
  const boost::asio::ip::tcp::endpoint endpoint(
      boost::asio::ip::make_address("127.0.0.1"), server.port());
  HttpRequest request;
  request.method = "POST";
  request.target = url.path;
  request.body = R"({"shard":"s","subscriber":"bot-2"})";
  auto call = [&](boost::asio::ssl::context& tls) {
    boost::asio::io_context ioc;
    std::optional<Result<HttpResponse>> out;
    AsyncHttpCall(ioc, &tls, endpoint, url, request, std::chrono::seconds(5),
                  [&](Result<HttpResponse> r) { out = std::move(r); });
    ioc.run();
    return std::move(out.value());
  };
  boost::asio::ssl::context trusting(boost::asio::ssl::context::tls_client);
  trusting.add_certificate_authority(boost::asio::buffer(
      server.certificate_pem().data(), server.certificate_pem().size()));
  trusting.set_verify_mode(boost::asio::ssl::verify_peer);
  Result<HttpResponse> r = call(trusting);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body)["subscriberId"], "bot-2");

  boost::asio::ssl::context strict(boost::asio::ssl::context::tls_client);
  strict.set_verify_mode(boost::asio::ssl::verify_peer);
  r = call(strict);
  EXPECT_EQ(r.status().code(), StatusCode::kIo);
  EXPECT_EQ(r.status().message().rfind("tls: ", 0), 0u) << r.status().message();
}

TEST(HttpClientTest, AsyncCallTimesOut) {
  OneShotReceiver receiver("", /*hold=*/true);
  const Url url =
      ParseUrl("http://127.0.0.1:" + std::to_string(receiver.port())).value();
  boost::asio::io_context ioc;
  std::optional<Result<HttpResponse>> out;
  AsyncHttpCall(ioc, nullptr,
                boost::asio::ip::tcp::endpoint(
                    boost::asio::ip::make_address("127.0.0.1"), url.port),
                url, HttpRequest{}, std::chrono::milliseconds(50),
                [&](Result<HttpResponse> r) { out = std::move(r); });
  ioc.run();
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out->status().message(), HasSubstr("timed out"));
}

}  // namespace
}  // namespace tessera::net::client
