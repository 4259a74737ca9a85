// The direct write's pieces: the frame header at every length boundary,
// and SendParts/SendBufferRoom on a real socket pair.
#include "net/direct_write.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

namespace tessera::net {
namespace {

std::vector<uint8_t> Header(uint64_t size) {
  uint8_t out[10];
  const size_t n = EncodeBinaryFrameHeader(size, out);
  return {out, out + n};
}

TEST(DirectWrite, FrameHeaderLengths) {
  EXPECT_EQ(Header(0), (std::vector<uint8_t>{0x82, 0}));
  EXPECT_EQ(Header(125), (std::vector<uint8_t>{0x82, 125}));
  EXPECT_EQ(Header(126), (std::vector<uint8_t>{0x82, 126, 0, 126}));
  EXPECT_EQ(Header(65535), (std::vector<uint8_t>{0x82, 126, 0xff, 0xff}));
  EXPECT_EQ(Header(65536),
            (std::vector<uint8_t>{0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(Header(0x0102030405060708ULL),
            (std::vector<uint8_t>{0x82, 127, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(DirectWrite, SendsThePartsInOrderAndStopsWhenTheBufferFills) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  const std::string_view parts[] = {"ab", "", "cde", "f"};
  EXPECT_EQ(SendParts(fds[0], parts), 6);
  char buf[16];
  ASSERT_EQ(read(fds[1], buf, sizeof buf), 6);
  EXPECT_EQ(std::string(buf, 6), "abcdef");
  // Nobody reads: sends stop with -EAGAIN instead of blocking.
  const std::string chunk(64 * 1024, 'x');
  const std::string_view big[] = {chunk};
  int64_t last = 0;
  for (int i = 0; i < 1000 && last >= 0; ++i) last = SendParts(fds[0], big);
  EXPECT_EQ(last, -EAGAIN);
  close(fds[0]);
  close(fds[1]);
}

// A connected loopback TCP pair: {client, server}. A client_rcvbuf > 0 is
// set before connecting, so the window the client advertises never exceeds
// it.
std::pair<int, int> TcpPair(int client_rcvbuf = 0) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return {-1, -1};
  }
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  if (client_rcvbuf > 0 &&
      setsockopt(client, SOL_SOCKET, SO_RCVBUF, &client_rcvbuf,
                 sizeof client_rcvbuf) != 0) {
    return {-1, -1};
  }
  if (connect(client, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return {-1, -1};
  }
  const int server = accept(listener, nullptr, nullptr);
  close(listener);
  return {client, server};
}

TEST(DirectWrite, RoomShrinksAsTheSendBufferFills) {
  // The client's small receive buffer is set before it connects: set
  // afterwards, the larger window it has already advertised is never shrunk,
  // so how much it takes in would depend on how (and when) its kernel copes
  // with data beyond its buffer.
  auto [client, server] = TcpPair(/*client_rcvbuf=*/4096);
  ASSERT_GE(server, 0);
  const int size = 64 * 1024;
  ASSERT_EQ(setsockopt(server, SOL_SOCKET, SO_SNDBUF, &size, sizeof size), 0);
  EXPECT_TRUE(SendBufferRoom(server) >= 2 * 1000);
  EXPECT_FALSE(SendBufferRoom(server) >= 2 * (1 << 20));  // more than it holds
  // The client reads nothing: the room runs out, and while there was room
  // every message went out whole.
  const std::string chunk(2000, 'x');
  const std::string_view part[] = {chunk};
  int sent = 0;
  while (SendBufferRoom(server) >= 2 * chunk.size() && sent < 100'000) {
    ASSERT_EQ(SendParts(server, part), 2000) << "after " << sent;
    ++sent;
  }
  EXPECT_GT(sent, 0);
  EXPECT_LT(sent, 100'000);
  EXPECT_FALSE(SendBufferRoom(-1) >= 2 * 10);
  close(client);
  close(server);
}

}  // namespace
}  // namespace tessera::net
