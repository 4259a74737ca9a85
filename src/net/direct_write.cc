#include "net/direct_write.h"

#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

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
  constexpr size_t kMaxParts = 8;
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
  constexpr size_t kMaxPayloadParts = 4;
  if (payload.size() > kMaxPayloadParts) {
    *error = EINVAL;
    return DirectResult::kFailed;
  }
  size_t size = 0;
  for (std::string_view p : payload) size += p.size();
  const size_t need = 2 * (size + 10);
  if (*room < need) *room = SendBufferRoom(fd);
  if (*room < need) return DirectResult::kNoRoom;
  *room -= need;
  uint8_t header[10];
  const size_t header_size = EncodeBinaryFrameHeader(size, header);
  std::string_view parts[kMaxPayloadParts + 1] = {
      {reinterpret_cast<const char*>(header), header_size}};
  std::copy(payload.begin(), payload.end(), parts + 1);
  const std::span<const std::string_view> all(parts, payload.size() + 1);
  const int64_t sent = SendParts(fd, all);
  if (sent == -EAGAIN || sent == -EWOULDBLOCK) {
    *room = 0;
    return DirectResult::kNoRoom;
  }
  if (sent < 0) {
    *error = static_cast<int>(-sent);
    return DirectResult::kFailed;
  }
  if (static_cast<size_t>(sent) == header_size + size) {
    return DirectResult::kWritten;
  }
  rest->clear();
  size_t skip = static_cast<size_t>(sent);
  for (std::string_view p : all) {
    const size_t n = std::min(skip, p.size());
    rest->append(p.substr(n));
    skip -= n;
  }
  return DirectResult::kShort;
}

}  // namespace tessera::net
