// Creating a store's parent directories so that they survive power loss.
//
// Durability: SQLite syncs the directory holding the database when it
// creates the write-ahead log, which covers the database file's own entry;
// the entries of directories we create above it are synced here.
#ifndef TESSERA_STORE_DIRECTORIES_H_
#define TESSERA_STORE_DIRECTORIES_H_

#include <string>

#include "common/status.h"

namespace tessera::store {

// Creates every missing ancestor directory of `file_path` (a no-op when
// there are none) and fsyncs the parent of each one it created.
// Thread-safety: any thread. Errors: kIo naming the directory and the file.
Status CreateParentDirectories(const std::string& file_path);

}  // namespace tessera::store

#endif  // TESSERA_STORE_DIRECTORIES_H_
