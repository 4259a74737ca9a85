// Replacement global allocation functions, linked into every guest.
//
// Debian's wasm32 libc++abi is built without exceptions, so its operator new
// returns null when malloc fails, and the caller (std::vector, std::string,
// ...) then writes through a null pointer: in wasm that silently overwrites
// the bottom of linear memory. These versions panic instead, so running out
// of memory stops the shard with a clear message. The nothrow forms still
// return null, as the standard says. operator delete is libc++abi's (free).
#include <cstddef>
#include <cstdlib>
#include <new>

#include "tessera/log.h"

namespace {

// Builds the message without allocating: there is no memory left.
[[noreturn]] void OutOfMemory(std::size_t size) {
  char text[64] = "out of memory: cannot allocate ";
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  char digits[24];
  std::size_t d = 0;
  do {
    digits[d++] = static_cast<char>('0' + size % 10);
    size /= 10;
  } while (size != 0);
  while (d > 0) text[n++] = digits[--d];
  for (const char* s = " bytes"; *s != '\0'; ++s) text[n++] = *s;
  tessera::panic(std::string_view(text, n));
}

void* AllocateOrNull(std::size_t size, std::size_t align) {
  if (size == 0) size = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(size);
  void* p = nullptr;
  return posix_memalign(&p, align, size) == 0 ? p : nullptr;
}

// As the standard's operator new: retry through the new_handler, if any.
void* Allocate(std::size_t size, std::size_t align) {
  for (;;) {
    if (void* p = AllocateOrNull(size, align)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) OutOfMemory(size);
    handler();
  }
}

}  // namespace

void* operator new(std::size_t size) {
  return Allocate(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size) {
  return Allocate(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align) {
  return Allocate(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return Allocate(size, static_cast<std::size_t>(align));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return AllocateOrNull(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return AllocateOrNull(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align,
                   const std::nothrow_t&) noexcept {
  return AllocateOrNull(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align,
                     const std::nothrow_t&) noexcept {
  return AllocateOrNull(size, static_cast<std::size_t>(align));
}
