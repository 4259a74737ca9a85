// decode_value: reads any supported value (the types listed in
// tessera/encode.h) with either codec's reader.
//
// Contract: returns false on failure, with the reader holding an error that
// names the field path ("field \"players[2].x\": expected a number, found a
// string"). On failure `out` may be partly written. Struct members missing
// from the input keep the values `out` already had; unknown keys are skipped.
// Numbers are checked against the target type's range; floats must be finite.
// A variant accepts {"tag": value}, {"tag": null} or the bare string "tag"
// (the last two leave the alternative default-constructed).
#ifndef TESSERA_DECODE_H_
#define TESSERA_DECODE_H_

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "tessera/detail/reader_base.h"
#include "tessera/detail/traits.h"
#include "tessera/fields.h"

namespace tessera {

template <class R, class T>
bool decode_value(R& r, T& out);

namespace detail {

// `text` in quotes, cut to 64 bytes: error messages may echo untrusted input.
inline std::string quote_untrusted(std::string_view text) {
  constexpr std::size_t kMax = 64;
  std::string quoted = "\"";
  quoted.append(text.substr(0, kMax));
  quoted += text.size() > kMax ? "...\"" : "\"";
  return quoted;
}

template <class R, class T>
bool decode_integer(R& r, T& out) {
  if constexpr (std::is_signed_v<T>) {
    std::int64_t v = 0;
    if (!r.read_int64(v)) return false;
    if (v < std::numeric_limits<T>::min() ||
        v > std::numeric_limits<T>::max()) {
      return r.fail(std::string("integer out of range for ") +
                    integer_name<T>());
    }
    out = static_cast<T>(v);
  } else {
    std::uint64_t v = 0;
    if (!r.read_uint64(v)) return false;
    if (v > std::numeric_limits<T>::max()) {
      return r.fail(std::string("integer out of range for ") +
                    integer_name<T>());
    }
    out = static_cast<T>(v);
  }
  return true;
}

template <class R, class T>
bool decode_fields(R& r, T& out) {
  if (!r.begin_object()) return false;
  const auto description = describe<T>();
  std::string key;
  while (r.object_next(key)) {
    bool matched = false;
    bool ok = true;
    std::apply(
        [&](const auto&... field) {
          ((!matched && field.name == key
                ? (matched = true, ok = decode_value(r, out.*(field.member)))
                : false),
           ...);
        },
        description.fields);
    if (!matched) ok = r.skip();
    if (!ok) {
      r.prefix_field(key);
      return false;
    }
  }
  return !r.failed();
}

// Emplaces the alternative whose tag is `tag` and, when `has_value`, decodes
// the value that follows into it (null keeps it default-constructed).
template <class R, class... Alts, std::size_t... I>
bool decode_alternative(R& r, std::string_view tag, bool has_value,
                        std::variant<Alts...>& out, std::index_sequence<I...>) {
  bool matched = false;
  bool ok = true;
  const auto one = [&](auto index) {
    constexpr std::size_t kIndex = decltype(index)::value;
    using Alt = std::variant_alternative_t<kIndex, std::variant<Alts...>>;
    static_assert(HasFields<Alt>,
                  "tessera: variant alternatives need TESSERA_FIELDS (their "
                  "snake_case name is the tag)");
    if (matched || tag_of<Alt>() != tag) return;
    matched = true;
    Alt& alternative = out.template emplace<kIndex>();
    if (!has_value) return;
    if (r.peek() == Kind::kNull) {
      ok = r.read_null();
    } else if (!decode_value(r, alternative)) {
      r.prefix_field(tag);
      ok = false;
    }
  };
  (one(std::integral_constant<std::size_t, I>()), ...);
  if (matched) return ok;
  std::string expected;
  ((expected += (I == 0 ? "" : ", "), expected += tag_of<Alts>()), ...);
  return r.fail("unknown variant " + quote_untrusted(tag) +
                ", expected one of: " + expected);
}

template <class R, class... Alts>
bool decode_variant(R& r, std::variant<Alts...>& out) {
  const auto indices = std::index_sequence_for<Alts...>();
  std::string tag;
  const Kind kind = r.peek();
  if (kind == Kind::kString) {
    return r.read_string(tag) &&
           decode_alternative(r, tag, /*has_value=*/false, out, indices);
  }
  if (kind != Kind::kObject && kind != Kind::kEnd && kind != Kind::kInvalid) {
    return r.fail(
        mismatch_message("an object with one key naming the variant", kind));
  }
  if (!r.begin_object()) return false;  // reports truncated/malformed input
  if (!r.object_next(tag)) {
    if (r.failed()) return false;
    return r.fail("expected one key naming the variant, found an empty object");
  }
  if (!decode_alternative(r, tag, /*has_value=*/true, out, indices)) {
    return false;
  }
  std::string extra;
  if (r.object_next(extra)) {
    return r.fail("expected one key naming the variant, found a second key " +
                  quote_untrusted(extra));
  }
  return !r.failed();
}

}  // namespace detail

template <class R, class T>
bool decode_value(R& r, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    return r.read_bool(out);
  } else if constexpr (detail::kIsInteger<T>) {
    return detail::decode_integer(r, out);
  } else if constexpr (std::is_same_v<T, float>) {
    double v = 0;
    if (!r.read_double(v)) return false;
    if (v > FLT_MAX || v < -FLT_MAX) {
      return r.fail("number out of range for float");
    }
    out = static_cast<float>(v);
    return true;
  } else if constexpr (std::is_same_v<T, double>) {
    return r.read_double(out);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return r.read_string(out);
  } else if constexpr (detail::kIsOptional<T>) {
    if (r.peek() == Kind::kNull) {
      out.reset();
      return r.read_null();
    }
    return decode_value(r, out.emplace());
  } else if constexpr (detail::kIsVector<T>) {
    if (!r.begin_array()) return false;
    out.clear();
    for (std::size_t i = 0; r.array_next(); ++i) {
      typename T::value_type element{};
      if (!decode_value(r, element)) {
        r.prefix_index(i);
        return false;
      }
      out.push_back(std::move(element));
    }
    return !r.failed();
  } else if constexpr (detail::kIsStringMap<T>) {
    if (!r.begin_object()) return false;
    out.clear();
    std::string key;
    while (r.object_next(key)) {
      typename T::mapped_type element{};
      if (!decode_value(r, element)) {
        r.prefix_field(key);
        return false;
      }
      out.insert_or_assign(key, std::move(element));
    }
    return !r.failed();
  } else if constexpr (detail::kIsVariant<T>) {
    return detail::decode_variant(r, out);
  } else if constexpr (HasFields<T>) {
    return detail::decode_fields(r, out);
  } else {
    static_assert(detail::kAlwaysFalse<T>,
                  "tessera: this type cannot be decoded; give structs "
                  "TESSERA_FIELDS(Type, members...)");
    return false;
  }
}

}  // namespace tessera

#endif  // TESSERA_DECODE_H_
