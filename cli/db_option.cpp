#include "cli/db_option.hpp"

#include <optional>

#include <CLI/CLI.hpp>

#include "ktune/error.hpp"
#include "tuner/space/spec_work.hpp"

namespace ktune::cli {

void add_db_option(CLI::App& cmd, std::string& db) {
  cmd.add_option("--db", db,
                 "Database file, e.g. --db ./h200.db (default: $KTUNE_DB, else "
                 "$XDG_CACHE_HOME/ktune/ktune.db, else ~/.cache/ktune/ktune.db)")
      ->type_name("PATH");
}

std::filesystem::path db_path(const std::string& flag) {
  return cache::resolve_db_path(flag.empty() ? std::nullopt : std::optional<std::string>(flag));
}

cache::ConfigCache open_existing(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw Error(ErrorKind::kNotFound, "no database at " + path.string() + "; run `ktune tune` first");
  }
  return cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly);
}

cache::ConfigCache open_for_writing(const std::filesystem::path& path) {
  return cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadWrite, tuner::spec_work_model());
}

}  // namespace ktune::cli
