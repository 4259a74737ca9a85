#include "net/direct_write.h"

#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <tuple>
#include <utility>

namespace tessera::net {

size_t EncodeBinaryFrameHeader(uint64_t payload_size, uint8_t out[10]) {
  out[0] = 0x82;  // FIN, opcode 2 (binary)
  if (payload_size < 126) {
    out[1] = static_cast<uint8_t>(payload_size);
    return 2;
  }
  if (payload_size <= 0xffff) {
    out[1] = 126;
    out[2] = static_cast<uint8_t>(payload_size >> 8);
    out[3] = static_cast<uint8_t>(payload_size);
    return 4;
  }
  out[1] = 127;
  for (int i = 0; i < 8; ++i) {
    out[2 + i] = static_cast<uint8_t>(payload_size >> (56 - 8 * i));
  }
  return 10;
}

size_t SendBufferRoom(int fd) {
#ifdef SO_MEMINFO
  uint32_t info[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof info;
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0 ||
      len < sizeof(uint32_t) * (SK_MEMINFO_WMEM_QUEUED + 1)) {
    return 0;
  }
  constexpr uint64_t kMargin = 16 * 1024;
  const uint64_t used = uint64_t{info[SK_MEMINFO_WMEM_QUEUED]} + kMargin;
  const uint64_t size = info[SK_MEMINFO_SNDBUF];
  return size > used ? static_cast<size_t>(size - used) : 0;
#else
  (void)fd;
  return 0;
#endif
}

int64_t SendParts(int fd, std::span<const std::string_view> parts) {
  constexpr size_t kMaxParts = kMaxDirectBatch * (kMaxPayloadParts + 1);
  iovec iov[kMaxParts];
  size_t n = 0;
  for (std::string_view p : parts) {
    if (p.empty()) continue;
    if (n == kMaxParts) return -EINVAL;
    iov[n].iov_base = const_cast<char*>(p.data());
    iov[n].iov_len = p.size();
    ++n;
  }
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = n;
  ssize_t sent;
  do {
    sent = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent < 0 ? -errno : sent;
}

DirectResult WriteMessageDirect(int fd,
                                std::span<const std::string_view> payload,
                                size_t* room, std::string* rest, int* error) {
  if (payload.size() > kMaxPayloadParts) {
    *error = EINVAL;
    return DirectResult::kFailed;
  }
  MessageParts parts{};
  std::copy(payload.begin(), payload.end(), parts.begin());
  size_t whole = 0;
  return WriteMessagesDirect(fd, std::span<const MessageParts>(&parts, 1), room,
                             rest, error, &whole);
}

DirectResult WriteMessagesDirect(int fd, std::span<const MessageParts> messages,
                                 size_t* room, std::string* rest, int* error,
                                 size_t* whole) {
  *whole = 0;
  if (messages.size() > kMaxDirectBatch) {
    *error = EINVAL;
    return DirectResult::kFailed;
  }
  auto payload_size = [](const MessageParts& m) {
    size_t size = 0;
    for (std::string_view p : m) size += p.size();
    return size;
  };
  // How many fit the room (asking the socket once when the estimate is
  // short for the first).
  auto fitting = [&] {
    size_t used = 0, n = 0;
    for (const MessageParts& m : messages) {
      const size_t need = 2 * (payload_size(m) + 10);
      if (used + need > *room) break;
      used += need;
      ++n;
    }
    return std::pair(n, used);
  };
  auto [count, need] = fitting();
  if (count < messages.size()) {
    *room = SendBufferRoom(fd);
    std::tie(count, need) = fitting();
  }
  if (count == 0) return DirectResult::kNoRoom;
  *room -= need;
  uint8_t headers[kMaxDirectBatch][10];
  std::string_view parts[kMaxDirectBatch * (kMaxPayloadParts + 1)];
  size_t ends[kMaxDirectBatch];  // each message's end in `parts`
  size_t n = 0, total = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t size = payload_size(messages[i]);
    const size_t header_size = EncodeBinaryFrameHeader(size, headers[i]);
    parts[n++] = {reinterpret_cast<const char*>(headers[i]), header_size};
    for (std::string_view p : messages[i]) parts[n++] = p;
    ends[i] = n;
    total += header_size + size;
  }
  const int64_t sent =
      SendParts(fd, std::span<const std::string_view>(parts, n));
  if (sent == -EAGAIN || sent == -EWOULDBLOCK) {
    *room = 0;
    return DirectResult::kNoRoom;
  }
  if (sent < 0) {
    *error = static_cast<int>(-sent);
    return DirectResult::kFailed;
  }
  if (static_cast<size_t>(sent) == total) {
    *whole = count;
    return DirectResult::kWritten;
  }
  // Which message the send ended in, and the rest of it.
  size_t skip = static_cast<size_t>(sent);
  size_t part = 0;
  while (*whole < count) {
    size_t size = 0;
    for (size_t j = part; j < ends[*whole]; ++j) size += parts[j].size();
    if (skip < size) break;
    skip -= size;
    part = ends[*whole];
    ++*whole;
  }
  rest->clear();
  for (size_t j = part; j < ends[*whole]; ++j) {
    const size_t k = std::min(skip, parts[j].size());
    rest->append(parts[j].substr(k));
    skip -= k;
  }
  return DirectResult::kShort;
}

}  // namespace tessera::net
