/// Fuzz target: importing an export file (`ktune cache import F`, ConfigCache::import_json) into a
/// fresh in-memory database. A rejected file must leave the database as it was (the import is one
/// transaction): the row counts are checked against an import that failed.

#include <memory>

#include "cache/config_cache.hpp"
#include "fuzz_contract.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ktune::fuzz::InputFile file(".json");
  const std::filesystem::path& path = file.write(data, size);
  // ":memory:" is SQLite's in-memory database: no file, nothing left between inputs.
  ktune::cache::ConfigCache db = ktune::cache::ConfigCache::open(":memory:");
  bool rejected = true;
  ktune::fuzz::expect_contract("export_import", [&] {
    (void)db.import_json(path);
    rejected = false;
  });
  if (rejected) {
    ktune::fuzz::require("export_import", db.gpus().empty(), "a rejected import left GPU rows behind");
  }
  return 0;
}
