// The direct write's pieces: the frame header at every length boundary,
// and SendParts/SendBufferRoom on a real socket pair.
#include "net/direct_write.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
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

// Reads what the peer holds now (the test's writes are done).
std::string ReadAll(int fd) {
  std::string out;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

std::string Frame(std::string_view payload) {
  uint8_t header[10];
  const size_t n = EncodeBinaryFrameHeader(payload.size(), header);
  return std::string(reinterpret_cast<const char*>(header), n) +
         std::string(payload);
}

TEST(DirectWrite, SeveralMessagesGoOutAsConsecutiveFramesInOneWrite) {
  auto [client, server] = TcpPair();
  ASSERT_GE(server, 0);
  const std::string big(300, 'b');
  const MessageParts messages[] = {
      {"one", "", "", ""}, {"tw", "o", "", ""}, {big, "", "!", ""}};
  size_t room = 0;  // unknown: the socket is asked
  std::string rest;
  int error = 0;
  size_t whole = 0;
  EXPECT_EQ(WriteMessagesDirect(server, messages, &room, &rest, &error, &whole),
            DirectResult::kWritten);
  EXPECT_EQ(whole, 3u);
  EXPECT_TRUE(rest.empty());
  // Give loopback a moment to carry the bytes over.
  std::string got;
  const std::string want = Frame("one") + Frame("two") + Frame(big + "!");
  for (int i = 0; i < 1000 && got.size() < want.size(); ++i) {
    got += ReadAll(client);
    if (got.size() < want.size()) usleep(1000);
  }
  EXPECT_EQ(got, want);
  close(client);
  close(server);
}

TEST(DirectWrite, OnlyTheMessagesWithRoomAreWrittenAndNoneWithoutIt) {
  auto [client, server] = TcpPair();
  ASSERT_GE(server, 0);
  const std::string a(100, 'a'), b(100, 'b');
  const MessageParts messages[] = {{a, "", "", ""}, {b, "", "", ""}};
  // Room for the first (twice its frame) but not both: the socket is asked,
  // and the ample answer takes both.
  size_t room = 2 * (100 + 10);
  std::string rest;
  int error = 0;
  size_t whole = 0;
  EXPECT_EQ(WriteMessagesDirect(server, messages, &room, &rest, &error, &whole),
            DirectResult::kWritten);
  EXPECT_EQ(whole, 2u);
  // A socket that cannot tell (not a socket): nothing is written.
  room = 0;
  EXPECT_EQ(WriteMessagesDirect(-1, messages, &room, &rest, &error, &whole),
            DirectResult::kNoRoom);
  EXPECT_EQ(whole, 0u);
  // Too many messages for one write is the caller's mistake.
  std::vector<MessageParts> many(kMaxDirectBatch + 1, MessageParts{"x"});
  EXPECT_EQ(WriteMessagesDirect(server, many, &room, &rest, &error, &whole),
            DirectResult::kFailed);
  EXPECT_EQ(error, EINVAL);
  close(client);
  close(server);
}

TEST(DirectWrite, AShortGatheredWriteKeepsTheRestOfTheMessageItEndedIn) {
  // A receiver that takes little and a send buffer bigger than the room
  // estimate allows: the kernel takes what fits its buffer, which ends
  // inside some message; the rest of that message is kept, the messages
  // after it are left for the caller.
  auto [client, server] = TcpPair(/*client_rcvbuf=*/4096);
  ASSERT_GE(server, 0);
  const int sndbuf = 64 * 1024;
  ASSERT_EQ(setsockopt(server, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf),
            0);
  const std::string chunk(60 * 1024, 'c');
  std::vector<MessageParts> messages(kMaxDirectBatch, MessageParts{chunk});
  size_t room = SIZE_MAX / 4;  // the estimate says yes to everything
  std::string rest;
  int error = 0;
  size_t whole = 0;
  const DirectResult result =
      WriteMessagesDirect(server, messages, &room, &rest, &error, &whole);
  ASSERT_EQ(result, DirectResult::kShort);
  ASSERT_LT(whole, messages.size());
  const size_t frame = Frame(chunk).size();
  EXPECT_GT(rest.size(), 0u);
  EXPECT_LE(rest.size(), frame);
  // What went out + the rest is the whole messages up to and including the
  // one cut short.
  std::string got;
  for (int i = 0; i < 2000 && got.size() + rest.size() < (whole + 1) * frame;
       ++i) {
    got += ReadAll(client);
    usleep(1000);
  }
  EXPECT_EQ(got.size() + rest.size(), (whole + 1) * frame);
  close(client);
  close(server);
}

}  // namespace
}  // namespace tessera::net
