#include "loadtest/input_template.h"

#include <cctype>
#include <charconv>
#include <optional>

namespace tessera::loadtest {
namespace {

using json = nlohmann::json;
using Piece = InputTemplate::Piece;

constexpr char kKnownTokens[] =
    "known tokens: $rand:A:B, $int:A:B, $bot, $sid, $aim:x, $aim:y, $aim:z; "
    "$$ is a literal $";

// A decimal number at the start of `text` ("-12", "3.5"); its length in
// *used. No exponent, so that "$int:1:5e" reads as 5 then "e".
std::optional<std::string_view> ScanNumber(std::string_view text,
                                           bool allow_fraction) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  const size_t digits_start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
    ++i;
  if (i == digits_start) return std::nullopt;
  if (allow_fraction && i + 1 < text.size() && text[i] == '.' &&
      std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
      ++i;
  }
  return text.substr(0, i);
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Parses "A:B" at the start of `text` (after "$rand:" or "$int:"): the two
// bounds and the characters used.
template <typename T>
Result<size_t> ScanRange(std::string_view token, std::string_view text,
                         bool fraction, T* low, T* high) {
  const std::string usage = "expected " + std::string(token) + ":A:B with " +
                            (fraction ? "numbers" : "integers") + " A <= B";
  std::optional<std::string_view> a = ScanNumber(text, fraction);
  if (!a || a->size() >= text.size() || text[a->size()] != ':') {
    return InvalidArgument(usage);
  }
  std::optional<std::string_view> b =
      ScanNumber(text.substr(a->size() + 1), fraction);
  if (!b) return InvalidArgument(usage);
  const size_t used = a->size() + 1 + b->size();
  if (used < text.size() && (text[used] == '.' || text[used] == ':')) {
    return InvalidArgument(usage);  // "$int:1:2.5", "$rand:1:2:3"
  }
  if (!ParseNumber(*a, low) || !ParseNumber(*b, high)) {
    return InvalidArgument(usage + " (out of range)");
  }
  if (*low > *high) {
    return InvalidArgument(std::string(token) + ":" + std::string(*a) + ":" +
                           std::string(*b) + ": the lower bound " +
                           std::string(*a) + " is above the upper bound " +
                           std::string(*b));
  }
  return used;
}

std::string NumberText(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : "0";
}

}  // namespace

Result<std::vector<Piece>> InputTemplate::Tokenize(std::string_view text) {
  std::vector<Piece> pieces;
  auto add_text = [&](std::string_view t) {
    if (t.empty()) return;
    if (pieces.empty() || pieces.back().kind != Piece::kText) {
      pieces.push_back(Piece{});
    }
    pieces.back().text += t;
  };
  size_t i = 0;
  while (i < text.size()) {
    const size_t dollar = text.find('$', i);
    if (dollar == std::string_view::npos) {
      add_text(text.substr(i));
      break;
    }
    add_text(text.substr(i, dollar - i));
    std::string_view rest = text.substr(dollar + 1);
    if (!rest.empty() && rest.front() == '$') {
      add_text("$");
      i = dollar + 2;
      continue;
    }
    size_t name_len = 0;
    while (name_len < rest.size() &&
           (std::isalpha(static_cast<unsigned char>(rest[name_len])) ||
            rest[name_len] == '_'))
      ++name_len;
    const std::string_view name = rest.substr(0, name_len);
    if (name.empty()) {  // "$5", a lone "$": plain text
      add_text("$");
      i = dollar + 1;
      continue;
    }
    Piece piece;
    size_t used = 1 + name_len;
    if (name == "bot") {
      piece.kind = Piece::kBot;
    } else if (name == "sid") {
      piece.kind = Piece::kSid;
    } else if (name == "aim") {
      const std::string_view axis = rest.substr(name_len);
      if (axis.size() < 2 || axis[0] != ':' ||
          (axis[1] != 'x' && axis[1] != 'y' && axis[1] != 'z')) {
        return InvalidArgument("\"" + std::string(text) +
                               "\": expected $aim:x, $aim:y or $aim:z");
      }
      piece.kind = Piece::kAim;
      piece.axis = axis[1] - 'x';
      used += 2;
    } else if (name == "rand" || name == "int") {
      const bool is_rand = name == "rand";
      const std::string token = "$" + std::string(name);
      if (rest.size() <= name_len || rest[name_len] != ':') {
        return InvalidArgument("\"" + std::string(text) + "\": expected " +
                               token + ":A:B");
      }
      const std::string_view range = rest.substr(name_len + 1);
      Result<size_t> n =
          is_rand
              ? ScanRange(token, range, true, &piece.rand_low, &piece.rand_high)
              : ScanRange(token, range, false, &piece.int_low, &piece.int_high);
      if (!n.ok()) {
        return InvalidArgument("\"" + std::string(text) +
                               "\": " + n.status().message());
      }
      piece.kind = is_rand ? Piece::kRand : Piece::kInt;
      used += 1 + *n;
    } else {
      return InvalidArgument("\"" + std::string(text) + "\": unknown token $" +
                             std::string(name) + " (" + kKnownTokens + ")");
    }
    pieces.push_back(std::move(piece));
    i = dollar + used;
  }
  return pieces;
}

Result<InputTemplate> InputTemplate::Parse(std::string_view json_text) {
  json source = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (source.is_discarded()) {
    return InvalidArgument("input template is not valid JSON: " +
                           std::string(json_text));
  }
  // Check every string value.
  bool aims = false;
  std::vector<const json*> stack = {&source};
  while (!stack.empty()) {
    const json* value = stack.back();
    stack.pop_back();
    if (value->is_string()) {
      Result<std::vector<Piece>> pieces =
          Tokenize(value->get_ref<const std::string&>());
      if (!pieces.ok()) {
        return InvalidArgument("input template " + std::string(json_text) +
                               ": " + pieces.status().message());
      }
      for (const Piece& p : *pieces) aims |= p.kind == Piece::kAim;
    } else if (value->is_structured()) {
      for (const json& child : *value) stack.push_back(&child);
    }
  }
  InputTemplate tpl(std::move(source));
  tpl.aims_ = aims;
  return tpl;
}

json InputTemplate::Render(std::mt19937_64& rng,
                           const TemplateContext& context) const {
  return RenderValue(source_, rng, context);
}

json InputTemplate::RenderValue(const json& value, std::mt19937_64& rng,
                                const TemplateContext& context) const {
  if (value.is_object()) {
    json out = json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      out[it.key()] = RenderValue(it.value(), rng, context);
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const json& item : value) {
      out.push_back(RenderValue(item, rng, context));
    }
    return out;
  }
  if (!value.is_string()) return value;
  const std::string& text = value.get_ref<const std::string&>();
  if (text.find('$') == std::string::npos) return value;
  // Checked by Parse, so this cannot fail.
  Result<std::vector<Piece>> pieces = Tokenize(text);
  if (!pieces.ok()) return value;
  auto draw_rand = [&](const Piece& p) {
    return std::uniform_real_distribution<double>(p.rand_low, p.rand_high)(rng);
  };
  auto draw_int = [&](const Piece& p) {
    return std::uniform_int_distribution<int64_t>(p.int_low, p.int_high)(rng);
  };
  if (pieces->size() == 1) {
    const Piece& p = pieces->front();
    if (p.kind == Piece::kRand) return draw_rand(p);
    if (p.kind == Piece::kInt) return draw_int(p);
    if (p.kind == Piece::kBot) return context.bot;
    if (p.kind == Piece::kAim) return context.aim[p.axis];
  }
  std::string out;
  for (const Piece& p : *pieces) {
    switch (p.kind) {
      case Piece::kText:
        out += p.text;
        break;
      case Piece::kRand:
        out += NumberText(draw_rand(p));
        break;
      case Piece::kInt:
        out += std::to_string(draw_int(p));
        break;
      case Piece::kBot:
        out += std::to_string(context.bot);
        break;
      case Piece::kSid:
        out += context.subscriber_id;
        break;
      case Piece::kAim:
        out += NumberText(context.aim[p.axis]);
        break;
    }
  }
  return out;
}

}  // namespace tessera::loadtest
