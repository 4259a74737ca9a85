// Input templates of `tessera bench shard --input`: a JSON value whose
// strings may hold tokens, replaced each time an input is made:
//
//   "$rand:A:B"  a uniform real number in [A, B)
//   "$int:A:B"   a uniform integer in [A, B], both ends included
//   "$bot"       the bot's number
//   "$sid"       the bot's subscriber id
//   "$aim:x"     where the bot draws the --aim entity (also :y, :z); an
//                input with these is only sent while the entity is drawn
//   "$$"         a literal "$"
//
// A string that is exactly one $rand, $int, $bot or $aim token becomes a JSON
// number; anywhere else a token is replaced by its text ("bot-$bot" ->
// "bot-7"). Only string values are rewritten, not object keys.
#ifndef TESSERA_LOADTEST_INPUT_TEMPLATE_H_
#define TESSERA_LOADTEST_INPUT_TEMPLATE_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::loadtest {

// What the tokens of one input are replaced with.
struct TemplateContext {
  int64_t bot = 0;
  std::string_view subscriber_id;
  double aim[3] = {0, 0, 0};  // $aim:x, :y, :z
};

class InputTemplate {
 public:
  // Parses `json_text` and checks every token. Errors: kInvalidArgument
  // naming the template and the bad token (not JSON, unknown token,
  // "$int:5:1" with A > B, non-numeric or non-integer bounds).
  static Result<InputTemplate> Parse(std::string_view json_text);

  // A fresh value with every token replaced. Thread-compatible (const).
  nlohmann::json Render(std::mt19937_64& rng,
                        const TemplateContext& context) const;

  const nlohmann::json& source() const { return source_; }
  // The template holds an $aim token.
  bool aims() const { return aims_; }

  // One piece of a string: literal text or a token.
  struct Piece {
    enum Kind { kText, kRand, kInt, kBot, kSid, kAim } kind = kText;
    int axis = 0;      // kAim: 0 x, 1 y, 2 z
    std::string text;  // kText
    double rand_low = 0, rand_high = 0;
    int64_t int_low = 0, int_high = 0;
  };
  // Splits a template string into pieces. Errors: kInvalidArgument.
  static Result<std::vector<Piece>> Tokenize(std::string_view text);

 private:
  explicit InputTemplate(nlohmann::json source) : source_(std::move(source)) {}
  nlohmann::json RenderValue(const nlohmann::json& value, std::mt19937_64& rng,
                             const TemplateContext& context) const;

  nlohmann::json source_;
  bool aims_ = false;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_INPUT_TEMPLATE_H_
