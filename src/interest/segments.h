// A flat buffer of u64 values cut into consecutive segments (one per
// subscriber), written through raw pointers (internal to InterestManager).
// Memory is kept between uses.
#ifndef TESSERA_INTEREST_SEGMENTS_H_
#define TESSERA_INTEREST_SEGMENTS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tessera::interest::internal {

class Segments {
 public:
  void Clear() {
    size_ = 0;
    offsets_.assign(1, 0);
  }
  // Room for `extra` more values at the returned pointer; Close() the
  // segment with the end of what was written. Invalidates earlier pointers.
  uint64_t* Open(size_t extra) {
    if (buf_.size() < size_ + extra) buf_.resize(2 * (size_ + extra));
    return buf_.data() + size_;
  }
  void Close(const uint64_t* end) {
    size_ = static_cast<size_t>(end - buf_.data());
    offsets_.push_back(size_);
  }

  size_t segments() const { return offsets_.size() - 1; }
  std::span<const uint64_t> operator[](size_t i) const {
    return {buf_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }
  std::span<uint64_t> mutable_segment(size_t i) {
    return {buf_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }
  std::span<const uint64_t> all() const { return {buf_.data(), size_}; }
  std::span<const size_t> offsets() const { return offsets_; }

 private:
  std::vector<uint64_t> buf_;
  size_t size_ = 0;
  std::vector<size_t> offsets_{0};
};

}  // namespace tessera::interest::internal

#endif  // TESSERA_INTEREST_SEGMENTS_H_
