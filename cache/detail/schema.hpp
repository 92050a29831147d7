#pragma once
/// The database schema: version 1's DDL, the list of forward migrations, the checks that decide
/// whether a file is a ktune database this build may open, and the structural check of verify().
/// docs/schema.md documents the result.

#include <filesystem>
#include <string>
#include <vector>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"

namespace ktune::cache::detail {

/// PRAGMA application_id of a ktune database: the bytes "ktun".
inline constexpr int kApplicationId = 0x6b74756e;

/// Looks at the raw bytes of an existing file, before SQLite touches it: throws
/// ktune::Error(kBadInput) when it is not an SQLite file or is shorter than its header says.
/// An empty file is accepted (SQLite treats it as an empty database).
void inspect_file_header(const std::filesystem::path& path);

/// Reads the schema version of an opened database without writing anything. Returns 0 for an
/// empty database. Throws ktune::Error(kBadInput) for a database that is not ktune's, whose
/// version is newer than kSchemaVersion, or that SQLite cannot read.
int read_schema_version(Database& db, const std::filesystem::path& path);

/// Brings the database to kSchemaVersion, one migration a version, in one write transaction.
/// Safe when several processes open a new database at once (the version is re-read under the lock).
/// Rows from before schema 4 get their work from their resources or, failing that, `work_model`.
void migrate(Database& db, const WorkModel& work_model);

/// Makes an empty database exactly what a build of schema `version` created (migrations 1 to
/// `version`), so that tests can check the migration from it. Throws kBadInput for no such version.
void create_at_version(Database& db, int version);

/// Missing tables or columns and a wrong version or application id, as sentences.
std::vector<std::string> check_structure(Database& db);

}  // namespace ktune::cache::detail
