#include "wasm/strict_checks.h"

#include <wabt/ir.h>

#include <optional>
#include <string>

namespace tessera::wasm {
namespace {

constexpr uint8_t kCustomSection = 0;
constexpr uint8_t kGlobalSection = 6;
constexpr uint8_t kDataSection = 11;
constexpr uint8_t kDataCountSection = 12;

Status Malformed(const std::string& why, size_t offset) {
  return InvalidArgument("invalid module: at byte " + std::to_string(offset) +
                         ": " + why);
}

// A cursor over [pos, end) of the module bytes.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, size_t pos, size_t end)
      : b_(bytes), pos_(pos), end_(end) {}
  size_t pos() const { return pos_; }
  bool done() const { return pos_ >= end_; }

  bool Byte(uint8_t* out) {
    if (pos_ >= end_) return false;
    *out = b_[pos_++];
    return true;
  }
  bool Skip(uint64_t n) {
    if (n > end_ - pos_) return false;
    pos_ += n;
    return true;
  }
  // Strict unsigned 32-bit LEB128: at most 5 bytes, no bits past 32.
  Status U32(uint32_t* out) {
    const size_t start = pos_;
    uint64_t v = 0;
    for (int i = 0; i < 5; ++i) {
      uint8_t byte;
      if (!Byte(&byte)) return Malformed("unexpected end", start);
      v |= uint64_t{byte & 0x7fu} << (7 * i);
      if (i == 4 && (byte & 0x70)) {
        return Malformed("integer too large", start);
      }
      if (!(byte & 0x80)) {
        *out = static_cast<uint32_t>(v);
        return Status::Ok();
      }
    }
    return Malformed("integer representation too long", start);
  }
  // Skips a LEB128 of at most `max_bytes` bytes; false if it does not end.
  bool SkipLeb(int max_bytes) {
    for (int i = 0; i < max_bytes; ++i) {
      uint8_t byte;
      if (!Byte(&byte)) return false;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }

 private:
  std::span<const uint8_t> b_;
  size_t pos_, end_;
};

bool ValidUtf8(std::span<const uint8_t> s) {
  size_t i = 0;
  while (i < s.size()) {
    uint8_t c = s[i];
    int n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated sequence
    for (int k = 1; k <= n; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    static const uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

Status CheckCustomName(std::span<const uint8_t> wasm, Reader r) {
  uint32_t len = 0;
  const size_t at = r.pos();
  TESSERA_RETURN_IF_ERROR(r.U32(&len));
  const size_t name_at = r.pos();
  if (!r.Skip(len))
    return Malformed("unexpected end (custom section name)", at);
  if (!ValidUtf8(wasm.subspan(name_at, len))) {
    return Malformed("malformed UTF-8 encoding (custom section name)", at);
  }
  return Status::Ok();
}

// Scans one constant expression up to its `end`. Returns nullopt when it
// meets an instruction it does not know (wabt judges those), false when
// the section ends first.
std::optional<bool> ScanConstExpr(Reader* r) {
  for (;;) {
    uint8_t op;
    if (!r->Byte(&op)) return false;
    switch (op) {
      case 0x0b:
        return true;  // end
      case 0x41:
        if (!r->SkipLeb(5)) return false;
        break;  // i32.const
      case 0x42:
        if (!r->SkipLeb(10)) return false;
        break;  // i64.const
      case 0x43:
        if (!r->Skip(4)) return false;
        break;  // f32.const
      case 0x44:
        if (!r->Skip(8)) return false;
        break;    // f64.const
      case 0x23:  // global.get
      case 0xd2:
        if (!r->SkipLeb(5)) return false;
        break;  // ref.func
      case 0xd0:
        if (!r->Skip(1)) return false;
        break;  // ref.null t
      case 0x6a:
      case 0x6b:
      case 0x6c:  // i32.add/sub/mul (extended const)
      case 0x7c:
      case 0x7d:
      case 0x7e:  // i64.add/sub/mul
        break;
      default:
        return std::nullopt;
    }
  }
}

Status CheckGlobals(Reader r) {
  uint32_t count = 0;
  TESSERA_RETURN_IF_ERROR(r.U32(&count));
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = r.pos();
    if (!r.Skip(2)) return Status::Ok();  // value type, mutability: wabt's
    std::optional<bool> ended = ScanConstExpr(&r);
    if (!ended) return Status::Ok();
    if (!*ended) {
      return Malformed(
          "unexpected end of section or function (global initializer "
          "without `end`)",
          at);
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckBinaryFraming(std::span<const uint8_t> wasm) {
  Reader r(wasm, 8, wasm.size());
  std::optional<uint32_t> data_count;
  bool has_data = false;
  while (!r.done()) {
    uint8_t id = 0;
    r.Byte(&id);
    uint32_t size = 0;
    TESSERA_RETURN_IF_ERROR(r.U32(&size));
    const size_t start = r.pos();
    if (size > wasm.size() - start) {
      return Malformed(
          "section size mismatch: the section extends past "
          "the end of the module",
          start);
    }
    Reader section(wasm, start, start + size);
    switch (id) {
      case kCustomSection:
        TESSERA_RETURN_IF_ERROR(CheckCustomName(wasm, section));
        break;
      case kGlobalSection:
        TESSERA_RETURN_IF_ERROR(CheckGlobals(section));
        break;
      case kDataCountSection: {
        uint32_t n = 0;
        if (section.U32(&n).ok()) data_count = n;
        break;
      }
      case kDataSection:
        has_data = true;
        break;
      default:
        break;
    }
    r.Skip(size);
  }
  if (data_count && *data_count > 0 && !has_data) {
    return Malformed(
        "data count and data section have inconsistent lengths (a data "
        "count of " +
            std::to_string(*data_count) + " and no data section)",
        wasm.size());
  }
  return Status::Ok();
}

namespace {

Status CheckExprs(const wabt::Module& m, const wabt::ExprList& exprs) {
  for (const wabt::Expr& e : exprs) {
    switch (e.type()) {
      case wabt::ExprType::Block:
        TESSERA_RETURN_IF_ERROR(
            CheckExprs(m, static_cast<const wabt::BlockExpr&>(e).block.exprs));
        break;
      case wabt::ExprType::Loop:
        TESSERA_RETURN_IF_ERROR(
            CheckExprs(m, static_cast<const wabt::LoopExpr&>(e).block.exprs));
        break;
      case wabt::ExprType::If: {
        const auto& ife = static_cast<const wabt::IfExpr&>(e);
        TESSERA_RETURN_IF_ERROR(CheckExprs(m, ife.true_.exprs));
        TESSERA_RETURN_IF_ERROR(CheckExprs(m, ife.false_));
        break;
      }
      case wabt::ExprType::CallIndirect: {
        const auto& ci = static_cast<const wabt::CallIndirectExpr&>(e);
        const wabt::Table* table = m.GetTable(ci.table);
        if (table && table->elem_type != wabt::Type::FuncRef) {
          return InvalidArgument(
              "invalid module: type mismatch: call_indirect through a table "
              "of " +
              std::string(table->elem_type.GetName()) + " (it needs funcref)");
        }
        break;
      }
      default:
        break;
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckValidation(const wabt::Module& m) {
  for (const wabt::Func* f : m.funcs) {
    TESSERA_RETURN_IF_ERROR(CheckExprs(m, f->exprs));
  }
  return Status::Ok();
}

}  // namespace tessera::wasm
