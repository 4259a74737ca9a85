#include "compute/contract.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tessera::compute {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSeedContract = R"({
  "description": "Spend gold and place the block atomically",
  "params": {
    "amount":   { "type": "int", "required": true },
    "targetId": { "type": "string" }
  },
  "result": { "placed": { "type": "bool" } }
})";

Contract MustParse(const std::string& json) {
  auto r = ParseContract(json);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Contract{};
}

std::string ContractError(const std::string& json) {
  auto r = ParseContract(json);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

std::string ParamsError(const Contract& c, const std::string& params) {
  Status s = ValidateParams(c, params);
  EXPECT_FALSE(s.ok()) << params;
  return s.message();
}

std::string PolicyError(const std::string& json) {
  Status s = CheckInvokePolicy(json);
  EXPECT_FALSE(s.ok()) << json;
  return s.message();
}

// ---- contracts

TEST(ContractTest, ParsesTheSeedsContract) {
  const Contract c = MustParse(kSeedContract);
  EXPECT_EQ(c.description, "Spend gold and place the block atomically");
  ASSERT_EQ(c.params.size(), 2u);
  EXPECT_EQ(c.params[0].name, "amount");
  EXPECT_EQ(c.params[0].type, "int");
  EXPECT_TRUE(c.params[0].required);
  EXPECT_EQ(c.params[1].name, "targetId");
  EXPECT_EQ(c.params[1].type, "string");
  EXPECT_FALSE(c.params[1].required);
  ASSERT_EQ(c.result.size(), 1u);
  EXPECT_EQ(c.result[0].name, "placed");
  EXPECT_EQ(c.result[0].type, "bool");
}

TEST(ContractTest, FieldsAreInNameOrderWithDescriptions) {
  const Contract c = MustParse(R"({"params": {
      "zeta": {"type": "array"}, "alpha": {"type": "object",
      "description": "the first"}, "mid": {"type": "float"}}})");
  ASSERT_EQ(c.params.size(), 3u);
  EXPECT_EQ(c.params[0].name, "alpha");
  EXPECT_EQ(c.params[0].description, "the first");
  EXPECT_EQ(c.params[1].name, "mid");
  EXPECT_EQ(c.params[2].name, "zeta");
  EXPECT_TRUE(c.result.empty());
  EXPECT_TRUE(MustParse("{}").params.empty());
}

TEST(ContractTest, RefusalsNameTheField) {
  EXPECT_EQ(ContractError(R"({"params": {"amount": {"type": "long"}}})"),
            "params.amount.type: \"long\" is not one of int, float, string, "
            "bool, object, array");
  EXPECT_EQ(ContractError(R"({"params": {"amount": {"required": true}}})"),
            "params.amount.type: required");
  EXPECT_EQ(ContractError(R"({"params": {"amount": {"type": 1}}})"),
            "params.amount.type: expected a string, got int");
  EXPECT_EQ(ContractError(
                R"({"params": {"amount": {"type": "int", "required": 1}}})"),
            "params.amount.required: expected a bool, got int");
  EXPECT_EQ(ContractError(
                R"({"params": {"a": {"type": "int", "description": false}}})"),
            "params.a.description: expected a string, got bool");
  EXPECT_EQ(ContractError(R"({"params": {"a": {"type": "int", "min": 1}}})"),
            "params.a.min: unknown field (type, required, description)");
  EXPECT_EQ(ContractError(R"({"params": {"a": "int"}})"),
            "params.a: expected an object, got string");
  EXPECT_EQ(ContractError(R"({"params": []})"),
            "params: expected an object, got array");
  EXPECT_EQ(ContractError(R"({"result": {"ok": {"type": "boolean"}}})"),
            "result.ok.type: \"boolean\" is not one of int, float, string, "
            "bool, object, array");
  EXPECT_EQ(ContractError(R"({"param": {}})"),
            "param: unknown contract field (description, params, result)");
  EXPECT_EQ(ContractError(R"({"description": 3})"),
            "description: expected a string, got int");
  EXPECT_EQ(ContractError("[]"), "contract: expected an object, got array");
  EXPECT_EQ(ContractError("null"), "contract: expected an object, got null");
  EXPECT_EQ(ContractError("{"), "contract: not valid JSON");
  EXPECT_THAT(ContractError(R"({"params": {"": {"type": "int"}}})"),
              HasSubstr("must be 1-128 bytes"));
  EXPECT_THAT(ContractError(R"({"params": {"a\nb": {"type": "int"}}})"),
              HasSubstr("without control characters"));
}

TEST(ContractTest, SizeBounds) {
  std::string many = R"({"params": {)";
  for (int i = 0; i < 129; ++i) {
    many += (i ? "," : "") + std::string("\"p") + std::to_string(i) +
            R"(": {"type": "int"})";
  }
  many += "}}";
  EXPECT_EQ(ContractError(many), "params: more than 128 fields");
  EXPECT_THAT(
      ContractError(R"({"description": ")" + std::string(2049, 'x') + "\"}"),
      HasSubstr("longer than 2048 bytes"));
  EXPECT_THAT(ContractError(R"({"params": {")" + std::string(129, 'n') +
                            R"(": {"type": "int"}}})"),
              HasSubstr("must be 1-128 bytes"));
}

TEST(ValidateParamsTest, SeedContractAcceptsAndPassesUndeclaredThrough) {
  const Contract c = MustParse(kSeedContract);
  EXPECT_TRUE(ValidateParams(c, R"({"amount": 5})").ok());
  EXPECT_TRUE(ValidateParams(c, R"({"amount": -5, "targetId": "b7"})").ok());
  EXPECT_TRUE(
      ValidateParams(c, R"({"amount": 1, "extra": [1, {"x": null}]})").ok());
}

TEST(ValidateParamsTest, RequiredAndWrongTypes) {
  const Contract c = MustParse(kSeedContract);
  EXPECT_EQ(ParamsError(c, "{}"), "params.amount: required");
  EXPECT_EQ(ParamsError(c, R"({"amount": "5"})"),
            "params.amount: expected int, got string");
  EXPECT_EQ(ParamsError(c, R"({"amount": 5.5})"),
            "params.amount: expected int, got float");
  EXPECT_EQ(ParamsError(c, R"({"amount": 5.0})"),
            "params.amount: expected int, got float");
  EXPECT_EQ(ParamsError(c, R"({"amount": null})"),
            "params.amount: expected int, got null");
  EXPECT_EQ(ParamsError(c, R"({"amount": 1, "targetId": 7})"),
            "params.targetId: expected string, got int");
  // One line per violation, in name order.
  EXPECT_EQ(ParamsError(c, R"({"targetId": false})"),
            "params.amount: required\n"
            "params.targetId: expected string, got bool");
}

TEST(ValidateParamsTest, EachType) {
  const Contract c = MustParse(R"({"params": {
      "i": {"type": "int"}, "f": {"type": "float"}, "s": {"type": "string"},
      "b": {"type": "bool"}, "o": {"type": "object"}, "a": {"type": "array"}}})");
  EXPECT_TRUE(ValidateParams(c, "{}").ok());  // none required
  EXPECT_TRUE(ValidateParams(c, R"({"i": -9223372036854775808, "f": 1.5,
      "s": "", "b": false, "o": {}, "a": []})")
                  .ok());
  EXPECT_TRUE(ValidateParams(c, R"({"f": 3})").ok());  // float: any number
  EXPECT_TRUE(ValidateParams(c, R"({"i": 9223372036854775807})").ok());
  EXPECT_EQ(ParamsError(c, R"({"i": 9223372036854775808})"),
            "params.i: 9223372036854775808 is out of range for int (64-bit)");
  EXPECT_EQ(ParamsError(c, R"({"i": true})"),
            "params.i: expected int, got bool");
  EXPECT_EQ(ParamsError(c, R"({"f": "1.5"})"),
            "params.f: expected float, got string");
  EXPECT_EQ(ParamsError(c, R"({"s": ["x"]})"),
            "params.s: expected string, got array");
  EXPECT_EQ(ParamsError(c, R"({"b": 0})"), "params.b: expected bool, got int");
  EXPECT_EQ(ParamsError(c, R"({"o": []})"),
            "params.o: expected object, got array");
  EXPECT_EQ(ParamsError(c, R"({"a": {}})"),
            "params.a: expected array, got object");
}

TEST(ValidateParamsTest, ParamsMustBeAnObject) {
  const Contract c = MustParse(kSeedContract);
  EXPECT_EQ(ParamsError(c, "[]"), "params: expected an object, got array");
  EXPECT_EQ(ParamsError(c, "\"x\""), "params: expected an object, got string");
  EXPECT_EQ(ParamsError(c, "{"), "params: not valid JSON");
  EXPECT_EQ(ParamsError(c, ""), "params: not valid JSON");
  // Even with nothing declared.
  EXPECT_EQ(ParamsError(Contract{}, "3"),
            "params: expected an object, got int");
  EXPECT_TRUE(ValidateParams(Contract{}, R"({"any": 1})").ok());
}

// ---- invoke policies

TEST(InvokePolicyTest, Anyone) {
  const std::string p = R"({"type": "anyone"})";
  EXPECT_TRUE(CheckInvokePolicy(p).ok());
  EXPECT_TRUE(InvokeAllowed(p, "u1", "{}"));
  EXPECT_TRUE(InvokeAllowed(p, "", "{}"));  // anonymous too
  EXPECT_TRUE(InvokeAllowed(p, "u1", "not json"));
}

TEST(InvokePolicyTest, UserInList) {
  const std::string p = R"({"type": "user_in_list", "users": ["u1", "u2"]})";
  EXPECT_TRUE(CheckInvokePolicy(p).ok());
  EXPECT_TRUE(InvokeAllowed(p, "u1", "{}"));
  EXPECT_TRUE(InvokeAllowed(p, "u2", "{}"));
  EXPECT_FALSE(InvokeAllowed(p, "u3", "{}"));
  EXPECT_FALSE(InvokeAllowed(p, "", "{}"));
  EXPECT_FALSE(InvokeAllowed(p, "U1", "{}"));
  const std::string none = R"({"type": "user_in_list", "users": []})";
  EXPECT_TRUE(CheckInvokePolicy(none).ok());
  EXPECT_FALSE(InvokeAllowed(none, "u1", "{}"));
  const std::string empty_id = R"({"type": "user_in_list", "users": [""]})";
  EXPECT_FALSE(InvokeAllowed(empty_id, "", "{}"));  // anonymous never listed
}

TEST(InvokePolicyTest, ParamEquals) {
  const std::string p = R"({"type": "param_equals", "param": "team",
                            "value": "red"})";
  EXPECT_TRUE(CheckInvokePolicy(p).ok());
  EXPECT_TRUE(InvokeAllowed(p, "u1", R"({"team": "red"})"));
  EXPECT_TRUE(InvokeAllowed(p, "", R"({"team": "red", "x": 1})"));
  EXPECT_FALSE(InvokeAllowed(p, "u1", R"({"team": "blue"})"));
  EXPECT_FALSE(InvokeAllowed(p, "u1", "{}"));
  EXPECT_FALSE(InvokeAllowed(p, "u1", R"(["team", "red"])"));
  EXPECT_FALSE(InvokeAllowed(p, "u1", "{bad"));
  // Any JSON value, compared as JSON (numbers by value).
  const std::string obj = R"({"type": "param_equals", "param": "pos",
                              "value": {"x": 1, "y": [2]}})";
  EXPECT_TRUE(InvokeAllowed(obj, "u", R"({"pos": {"y": [2], "x": 1}})"));
  EXPECT_FALSE(InvokeAllowed(obj, "u", R"({"pos": {"y": [3], "x": 1}})"));
  const std::string num = R"({"type": "param_equals", "param": "n",
                              "value": 3})";
  EXPECT_TRUE(InvokeAllowed(num, "u", R"({"n": 3})"));
  EXPECT_FALSE(InvokeAllowed(num, "u", R"({"n": "3"})"));
  const std::string null_value = R"({"type": "param_equals", "param": "n",
                                     "value": null})";
  EXPECT_TRUE(CheckInvokePolicy(null_value).ok());
  EXPECT_TRUE(InvokeAllowed(null_value, "u", R"({"n": null})"));
  EXPECT_FALSE(InvokeAllowed(null_value, "u", "{}"));  // absent is not null
}

TEST(InvokePolicyTest, ParamIsCaller) {
  const std::string p = R"({"type": "param_is_caller", "param": "userId"})";
  EXPECT_TRUE(CheckInvokePolicy(p).ok());
  EXPECT_TRUE(InvokeAllowed(p, "u1", R"({"userId": "u1"})"));
  EXPECT_FALSE(InvokeAllowed(p, "u2", R"({"userId": "u1"})"));
  EXPECT_FALSE(InvokeAllowed(p, "", R"({"userId": ""})"));
  EXPECT_FALSE(InvokeAllowed(p, "u1", "{}"));
  EXPECT_FALSE(InvokeAllowed(p, "1", R"({"userId": 1})"));
}

TEST(InvokePolicyTest, AllOfAnyOfNesting) {
  // (listed user AND targeting themselves) OR team == "admin"
  const std::string p = R"({"type": "any_of", "policies": [
      {"type": "all_of", "policies": [
          {"type": "user_in_list", "users": ["u1", "u2"]},
          {"type": "param_is_caller", "param": "target"}]},
      {"type": "param_equals", "param": "team", "value": "admin"}]})";
  ASSERT_TRUE(CheckInvokePolicy(p).ok()) << CheckInvokePolicy(p).message();
  EXPECT_TRUE(InvokeAllowed(p, "u1", R"({"target": "u1"})"));
  EXPECT_FALSE(InvokeAllowed(p, "u1", R"({"target": "u2"})"));
  EXPECT_FALSE(InvokeAllowed(p, "u3", R"({"target": "u3"})"));
  EXPECT_TRUE(InvokeAllowed(p, "u3", R"({"team": "admin"})"));
  EXPECT_TRUE(InvokeAllowed(p, "", R"({"team": "admin"})"));
  EXPECT_FALSE(InvokeAllowed(p, "", "{}"));
  const std::string all = R"({"type": "all_of", "policies": [
      {"type": "anyone"}, {"type": "user_in_list", "users": ["u1"]}]})";
  EXPECT_TRUE(InvokeAllowed(all, "u1", "{}"));
  EXPECT_FALSE(InvokeAllowed(all, "u2", "{}"));
}

TEST(InvokePolicyTest, ContainerLeavesAreValidButFailClosed) {
  const std::string p = R"({"type": "owner_of_self"})";
  EXPECT_TRUE(CheckInvokePolicy(p).ok());
  EXPECT_FALSE(InvokeAllowed(p, "u1", "{}"));
  EXPECT_FALSE(InvokeAllowed(p, "", "{}"));
  // Inside any_of it only adds nothing; inside all_of it denies everything.
  const std::string any = R"({"type": "any_of", "policies": [
      {"type": "owner_of_self"}, {"type": "anyone"}]})";
  EXPECT_TRUE(InvokeAllowed(any, "u1", "{}"));
  const std::string all = R"({"type": "all_of", "policies": [
      {"type": "owner_of_self"}, {"type": "anyone"}]})";
  EXPECT_FALSE(InvokeAllowed(all, "u1", "{}"));
}

TEST(InvokePolicyTest, MalformedPoliciesAreRefusedAndDeny) {
  struct Case {
    const char* policy;
    const char* error;
  };
  const Case cases[] = {
      {R"({"type": "owner"})", "type: unknown policy type \"owner\""},
      {R"({"type": "any_of", "policies": [{"type": "anyone"},
          {"type": "owner"}]})",
       "policies[1].type: unknown policy type \"owner\""},
      {R"({"type": "all_of", "policies": [{"type": "any_of", "policies": [
          {"type": "user_in_list", "users": ["a", 3]}]}]})",
       "policies[0].policies[0].users[1]: expected a string, got int"},
      {R"({})", "type: required"},
      {R"({"type": 5})", "type: expected a string, got int"},
      {R"({"type": "anyone", "users": []})",
       "users: unknown field for policy type \"anyone\""},
      {R"({"type": "user_in_list"})", "users: required"},
      {R"({"type": "user_in_list", "users": "u1"})",
       "users: expected an array, got string"},
      {R"({"type": "param_equals", "param": "p"})", "value: required"},
      {R"({"type": "param_equals", "value": 1})", "param: required"},
      {R"({"type": "param_is_caller", "param": ""})",
       "param: expected a non-empty string, got \"\""},
      {R"({"type": "param_is_caller", "param": 3})",
       "param: expected a non-empty string, got int"},
      {R"({"type": "all_of", "policies": []})", "policies: empty"},
      {R"({"type": "any_of"})", "policies: required"},
      {R"({"type": "any_of", "policies": {"type": "anyone"}})",
       "policies: expected an array, got object"},
      {R"({"type": "any_of", "policies": ["anyone"]})",
       "policies[0]: expected an object, got string"},
      {R"(["anyone"])", "policy: expected an object, got array"},
      {"null", "policy: expected an object, got null"},
      {"", "policy: not valid JSON"},
      {R"({"type": "anyone")", "policy: not valid JSON"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy);
    EXPECT_EQ(PolicyError(c.policy), c.error);
    EXPECT_FALSE(InvokeAllowed(c.policy, "a", R"({"p": 1})"));
  }
}

TEST(InvokePolicyTest, AMalformedBranchDeniesEvenBesideAnyone) {
  const std::string p = R"({"type": "any_of", "policies": [
      {"type": "anyone"}, {"type": "user_in_list"}]})";
  EXPECT_FALSE(CheckInvokePolicy(p).ok());
  EXPECT_FALSE(InvokeAllowed(p, "u1", "{}"));
}

TEST(InvokePolicyTest, ParamEqualsValueDepthIsBounded) {
  auto policy = [](int depth) {
    return R"({"type": "param_equals", "param": "p", "value": )" +
           std::string(depth, '[') + std::string(depth, ']') + "}";
  };
  EXPECT_TRUE(CheckInvokePolicy(policy(32)).ok());
  const std::string params =
      R"({"p": )" + std::string(32, '[') + std::string(32, ']') + "}";
  EXPECT_TRUE(InvokeAllowed(policy(32), "u", params));
  EXPECT_EQ(PolicyError(policy(33)), "value: nested deeper than 32");
  EXPECT_FALSE(InvokeAllowed(policy(33), "u", params));
  // Deep params are just unequal.
  EXPECT_FALSE(InvokeAllowed(
      policy(32), "u",
      R"({"p": )" + std::string(5000, '[') + std::string(5000, ']') + "}"));
}

TEST(InvokePolicyTest, NestingDepthIsBounded) {
  auto nested = [](int depth) {
    std::string p;
    for (int i = 0; i < depth; ++i) p += R"({"type": "all_of", "policies": [)";
    p += R"({"type": "anyone"})";
    for (int i = 0; i < depth; ++i) p += "]}";
    return p;
  };
  EXPECT_TRUE(CheckInvokePolicy(nested(16)).ok());
  EXPECT_TRUE(InvokeAllowed(nested(16), "u", "{}"));
  EXPECT_THAT(PolicyError(nested(17)), HasSubstr("nested deeper than 16"));
  EXPECT_FALSE(InvokeAllowed(nested(17), "u", "{}"));
}

}  // namespace
}  // namespace tessera::compute
