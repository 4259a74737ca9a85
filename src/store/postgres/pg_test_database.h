// The PostgreSQL tests' helpers on the shared throwaway cluster
// (pg_test_cluster.h), failing the current test (not aborting) when the
// cluster cannot start. Test-only; header-only, with gtest.
#ifndef TESSERA_STORE_POSTGRES_PG_TEST_DATABASE_H_
#define TESSERA_STORE_POSTGRES_PG_TEST_DATABASE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_test_cluster.h"

namespace tessera::store::pg {

// The process's cluster, or null after a test failure.
inline PgTestCluster* Cluster() {
  Status error;
  PgTestCluster* cluster = SharedPgTestCluster(&error);
  EXPECT_NE(cluster, nullptr) << error.ToString();
  return cluster;
}

// The URL of a fresh database ("" after a test failure).
inline std::string FreshDatabase() {
  PgTestCluster* cluster = Cluster();
  if (cluster == nullptr) return "";
  Result<std::string> url = cluster->NewDatabase();
  EXPECT_TRUE(url.ok()) << url.status().ToString();
  return url.ok() ? *url : "";
}

// The first column of the first row of `sql` on a connection of its own
// ("<none>" for no rows; "" after a test failure).
inline std::string QueryOne(const std::string& url, const std::string& sql) {
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(url);
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  if (!conn.ok()) return "";
  Result<PgResult> rows = (*conn)->Exec(sql, {}, "query");
  EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
  if (!rows.ok()) return "";
  if (rows->rows() == 0) return "<none>";
  return std::string(rows->Text(0, 0));
}

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_TEST_DATABASE_H_
