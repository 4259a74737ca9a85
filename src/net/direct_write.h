// Writing a whole server-to-client WebSocket message straight to the
// socket with one non-blocking sendmsg, instead of an asynchronous Beast
// write: on a busy shard, most of a connection's cost per frame is the
// asynchronous operation around the send, not the send.
//
// A direct write must never leave part of a message behind, or a later
// Beast write (a close, an automatic pong) could land in the middle of it:
// a message is written directly only when the socket's send buffer has
// ample room for all of it (SO_MEMINFO), and it reports how much went out, so
// the caller can finish a rare short write before anything else.
#ifndef TESSERA_NET_DIRECT_WRITE_H_
#define TESSERA_NET_DIRECT_WRITE_H_

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessera::net {

// The header of an unmasked, final, binary WebSocket frame (RFC 6455 5.2)
// carrying `payload_size` bytes; returns its length (2, 4 or 10).
size_t EncodeBinaryFrameHeader(uint64_t payload_size, uint8_t out[10]);

// How many more bytes the socket's send buffer can take now, with room to
// spare: its size less its queued memory (which counts the kernel's
// overhead too) and a margin; 0 when it cannot tell (not Linux, getsockopt
// failed). A message of n bytes is written directly only while this is at
// least 2n (the overhead of small segments).
size_t SendBufferRoom(int fd);

// The most messages one gathered write takes (WriteMessagesDirect).
inline constexpr size_t kMaxDirectBatch = 16;
// The most payload parts of one message.
inline constexpr size_t kMaxPayloadParts = 4;

// One sendmsg(MSG_DONTWAIT | MSG_NOSIGNAL) of `parts` (at most
// kMaxDirectBatch * (kMaxPayloadParts + 1); empty ones are skipped). Returns
// the bytes written (possibly fewer than all), or -errno.
int64_t SendParts(int fd, std::span<const std::string_view> parts);

enum class DirectResult {
  kWritten,  // the whole frame went out
  kNoRoom,   // nothing written: the send buffer is filling up
  kShort,    // part went out; the rest is in *rest, to write next
  kFailed,   // the socket failed (errno in *error)
};

// Writes one binary WebSocket message whose payload is the concatenation
// of `payload` (at most 4 parts) as a single frame, when the send buffer
// has room for it. `*room` is the caller's estimate of SendBufferRoom,
// kept low (each write takes twice its size off; the kernel frees memory
// as the peer acknowledges): the socket is asked again only when the
// estimate is too small, so most writes cost one system call.
DirectResult WriteMessageDirect(int fd,
                                std::span<const std::string_view> payload,
                                size_t* room, std::string* rest, int* error);

// One message's payload parts, in order (absent ones empty).
using MessageParts = std::array<std::string_view, kMaxPayloadParts>;

// Writes consecutive messages (at most kMaxDirectBatch), each as one binary
// frame, with a single sendmsg: as many of them, from the first, as the
// send buffer has room for (the same rule and estimate as above), so a
// burst of small messages costs one system call instead of one each.
// `*whole` is how many went out whole. kWritten: the first *whole (all of
// them, or as many as had room; at least one); kNoRoom: not even the first;
// kShort: the first *whole went out, then part of the next, whose rest is
// in *rest (write it before anything else); kFailed: the socket failed.
DirectResult WriteMessagesDirect(int fd, std::span<const MessageParts> messages,
                                 size_t* room, std::string* rest, int* error,
                                 size_t* whole);

}  // namespace tessera::net

#endif  // TESSERA_NET_DIRECT_WRITE_H_
