// Type traits that sort the value types the codecs support.
#ifndef TESSERA_DETAIL_TRAITS_H_
#define TESSERA_DETAIL_TRAITS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace tessera::detail {

template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

template <class T>
inline constexpr bool kIsVector = false;
template <class T, class A>
inline constexpr bool kIsVector<std::vector<T, A>> = true;

template <class T>
inline constexpr bool kIsStringMap = false;
template <class T, class C, class A>
inline constexpr bool kIsStringMap<std::map<std::string, T, C, A>> = true;

template <class T>
inline constexpr bool kIsVariant = false;
template <class... T>
inline constexpr bool kIsVariant<std::variant<T...>> = true;

// Characters are not numbers here: a char member is most likely a mistake
// for std::string.
template <class T>
inline constexpr bool kIsCharacter =
    std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
    std::is_same_v<T, char8_t> || std::is_same_v<T, char16_t> ||
    std::is_same_v<T, char32_t>;

template <class T>
inline constexpr bool kIsInteger =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !kIsCharacter<T>;

template <class T>
inline constexpr bool kAlwaysFalse = false;

// "int32", "uint8", ... for range errors.
template <class T>
const char* integer_name() {
  constexpr bool kSigned = std::is_signed_v<T>;
  switch (sizeof(T)) {
    case 1:
      return kSigned ? "int8" : "uint8";
    case 2:
      return kSigned ? "int16" : "uint16";
    case 4:
      return kSigned ? "int32" : "uint32";
    default:
      return kSigned ? "int64" : "uint64";
  }
}

}  // namespace tessera::detail

#endif  // TESSERA_DETAIL_TRAITS_H_
