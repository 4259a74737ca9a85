#include "store/sqlite_realm_sql.h"

namespace tessera::store {

Status PrepareRealmStatements(SqliteDb& db, RealmStatements& s) {
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.read_head,
              "SELECT kind, epoch, head_version FROM realms WHERE key = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.insert_realm,
              "INSERT INTO realms(key, kind, epoch, head_version, created_ms, "
              "updated_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?5)"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.set_head,
              "UPDATE realms SET epoch = ?2, head_version = ?3, "
              "updated_ms = ?4 WHERE key = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_realm, "DELETE FROM realms WHERE key = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.list_all, "SELECT key FROM realms ORDER BY key"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.list_kind, "SELECT key FROM realms WHERE kind = ?1 ORDER BY key"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.insert_log,
              "INSERT INTO realm_log(key, epoch, version, patch) "
              "VALUES(?1, ?2, ?3, ?4)"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.read_log,
              "SELECT version, patch FROM realm_log WHERE key = ?1 AND "
              "epoch = ?2 AND version > ?3 ORDER BY version LIMIT ?4"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.first_log,
              "SELECT version FROM realm_log WHERE key = ?1 AND epoch = ?2 "
              "ORDER BY version LIMIT 1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.compact_log,
              "DELETE FROM realm_log WHERE key = ?1 AND epoch = ?2 AND "
              "version <= ?3"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_log, "DELETE FROM realm_log WHERE key = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.insert_snapshot,
              "INSERT INTO realm_snapshots(key, epoch, version, schema_hash, "
              "state) VALUES(?1, ?2, ?3, ?4, ?5)"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.newest_snapshot,
              "SELECT version, schema_hash, state FROM realm_snapshots "
              "WHERE key = ?1 AND epoch = ?2 ORDER BY version DESC LIMIT 1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.newest_snapshot_version,
              "SELECT version FROM realm_snapshots WHERE key = ?1 AND "
              "epoch = ?2 ORDER BY version DESC LIMIT 1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.drop_older_snapshots,
              "DELETE FROM realm_snapshots WHERE key = ?1 AND epoch = ?2 AND "
              "version < ?3"));
  TESSERA_RETURN_IF_ERROR(Prepare(
      db, s.delete_snapshots, "DELETE FROM realm_snapshots WHERE key = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.put_alarm,
              "INSERT OR REPLACE INTO realm_alarms(key, name, due_ms, "
              "failures) VALUES(?1, ?2, ?3, ?4)"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_alarm,
              "DELETE FROM realm_alarms WHERE key = ?1 AND name = ?2"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.delete_alarms, "DELETE FROM realm_alarms WHERE key = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(db, s.list_alarms,
              "SELECT key, name, due_ms, failures FROM realm_alarms "
              "ORDER BY key, name"));

  return Status::Ok();
}

std::string RealmName(std::string_view key) {
  return "realm '" + std::string(key) + "'";
}

}  // namespace tessera::store
