#include "server/api_tokens.h"

#include <gtest/gtest.h>

namespace tessera::server {
namespace {

net::HttpRequest WithBearer(const std::string& token) {
  net::HttpRequest r;
  r.method = "GET";
  r.target = "/api/compute/modules";
  r.headers["authorization"] = "Bearer " + token;
  return r;
}

TEST(ApiTokensTest, ParsesScopesAndTheAdminHasAll) {
  Result<ApiTokens> tokens = ApiTokens::Parse(
      "manage_compute=tok1, view_compute_diagnostics=tok2", "admin");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->size(), 2u);
  Scopes manage = tokens->ScopesOf("tok1");
  EXPECT_TRUE(manage.Has(Scope::kManageCompute));
  EXPECT_TRUE(manage.Has(Scope::kViewComputeDiagnostics));  // implied
  Scopes view = tokens->ScopesOf("tok2");
  EXPECT_FALSE(view.Has(Scope::kManageCompute));
  EXPECT_TRUE(view.Has(Scope::kViewComputeDiagnostics));
  EXPECT_EQ(tokens->ScopesOf("admin"), Scopes::All());
  EXPECT_TRUE(tokens->ScopesOf("tok3").empty());
  EXPECT_TRUE(tokens->ScopesOf("tok").empty());  // a prefix is no match
  EXPECT_TRUE(tokens->ScopesOf("").empty());
}

TEST(ApiTokensTest, SeveralScopesForOneToken) {
  Result<ApiTokens> tokens =
      ApiTokens::Parse("view_compute_diagnostics+manage_compute=both", "");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_TRUE(tokens->ScopesOf("both").Has(Scope::kManageCompute));
  EXPECT_TRUE(tokens->ScopesOf("both").Has(Scope::kViewComputeDiagnostics));
}

TEST(ApiTokensTest, EmptySpecHasOnlyTheAdmin) {
  Result<ApiTokens> tokens = ApiTokens::Parse("  ", "admin");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(tokens->size(), 0u);
  EXPECT_EQ(tokens->ScopesOf("admin"), Scopes::All());
  // No admin token configured: nobody is admin, not even "".
  Result<ApiTokens> none = ApiTokens::Parse("", "");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->ScopesOf("").empty());
}

TEST(ApiTokensTest, ReadsTheBearerHeader) {
  Result<ApiTokens> tokens =
      ApiTokens::Parse("view_compute_diagnostics=v1", "admin");
  ASSERT_TRUE(tokens.ok());
  EXPECT_TRUE(
      tokens->ScopesOf(WithBearer("v1")).Has(Scope::kViewComputeDiagnostics));
  net::HttpRequest lower = WithBearer("v1");
  lower.headers["authorization"] = "bearer   v1 ";
  EXPECT_TRUE(tokens->ScopesOf(lower).Has(Scope::kViewComputeDiagnostics));
  net::HttpRequest basic = WithBearer("v1");
  basic.headers["authorization"] = "Basic v1";
  EXPECT_TRUE(tokens->ScopesOf(basic).empty());
  net::HttpRequest none;
  EXPECT_TRUE(tokens->ScopesOf(none).empty());
}

// Each refusal names the entry (by number and scope part) and never shows
// the token itself.
TEST(ApiTokensTest, ErrorsNameTheEntry) {
  struct Case {
    const char* spec;
    const char* expect;
  } cases[] = {
      {"manage_compute=a,,view_compute_diagnostics=b",
       "entry 2 (\"\"): is empty"},
      {"manage_compute", "entry 1 (\"manage_compute\"): expected scope=token"},
      {"manage_compute=a,manage=secret1",
       "entry 2 (\"manage=...\"): unknown scope \"manage\" (scopes: "
       "manage_compute, view_compute_diagnostics, manage_data, view_data)"},
      {"=secret1", "entry 1 (\"=...\"): no scope"},
      {"manage_compute=", "entry 1 (\"manage_compute=...\"): no token"},
      {"manage_compute=se cret", "contains whitespace"},
      {"manage_compute=secret1,view_compute_diagnostics=secret1",
       "entry 2 (\"view_compute_diagnostics=...\"): the same token as entry 1"},
      {"manage_compute=admin", "is the admin token"},
      {"manage_compute+bogus=secret1", "unknown scope \"bogus\""},
  };
  for (const Case& c : cases) {
    Result<ApiTokens> tokens = ApiTokens::Parse(c.spec, "admin");
    ASSERT_FALSE(tokens.ok()) << c.spec;
    EXPECT_EQ(tokens.status().code(), StatusCode::kInvalidArgument);
    const std::string& m = tokens.status().message();
    EXPECT_NE(m.find("TESSERA_API_TOKENS"), std::string::npos) << m;
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.spec << " -> " << m;
    EXPECT_EQ(m.find("secret1"), std::string::npos) << m;
  }
}

TEST(ApiTokensTest, DataScopes) {
  Result<ApiTokens> tokens = ApiTokens::Parse(
      "manage_data=md, view_data=vd, manage_compute=mc", "admin");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  Scopes manage = tokens->ScopesOf("md");
  EXPECT_TRUE(manage.Has(Scope::kManageData));
  EXPECT_TRUE(manage.Has(Scope::kViewData));  // implied
  EXPECT_FALSE(manage.Has(Scope::kManageCompute));
  EXPECT_FALSE(manage.Has(Scope::kViewComputeDiagnostics));
  Scopes view = tokens->ScopesOf("vd");
  EXPECT_TRUE(view.Has(Scope::kViewData));
  EXPECT_FALSE(view.Has(Scope::kManageData));
  // Compute scopes give no data access, and the admin has both.
  EXPECT_FALSE(tokens->ScopesOf("mc").Has(Scope::kViewData));
  EXPECT_TRUE(tokens->ScopesOf("admin").Has(Scope::kManageData));
  EXPECT_TRUE(tokens->ScopesOf("admin").Has(Scope::kViewData));
}

TEST(ApiTokensTest, ScopeNamesRoundTrip) {
  for (Scope s : {Scope::kManageCompute, Scope::kViewComputeDiagnostics,
                  Scope::kManageData, Scope::kViewData}) {
    EXPECT_EQ(ScopeFromName(ScopeName(s)), s);
  }
  EXPECT_FALSE(ScopeFromName("admin").has_value());
}

}  // namespace
}  // namespace tessera::server
