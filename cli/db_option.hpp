#pragma once
/// The `--db PATH` option every database command takes, and opening that database.
/// Resolution (cache::resolve_db_path): --db, else $KTUNE_DB, else
/// $XDG_CACHE_HOME/ktune/ktune.db, else ~/.cache/ktune/ktune.db.

#include <filesystem>
#include <string>

#include "cache/config_cache.hpp"

namespace CLI {
class App;
}

namespace ktune::cli {

/// Adds `--db PATH` to `cmd`, storing into `db` (left empty when not given).
void add_db_option(CLI::App& cmd, std::string& db);

/// The database path for a `--db` value ("" = not given).
std::filesystem::path db_path(const std::string& flag);

/// Opens an existing database read-only. A missing file throws ktune::Error(kNotFound)
/// "no database at PATH; run `ktune tune` first".
cache::ConfigCache open_existing(const std::filesystem::path& path);

/// Opens (creating when missing) a database for writing; rows migrated from an older schema or
/// imported without work get it from the kernel specs (tuner::spec_work_model).
cache::ConfigCache open_for_writing(const std::filesystem::path& path);

}  // namespace ktune::cli
