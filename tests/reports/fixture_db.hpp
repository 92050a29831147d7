#pragma once
/// Writes a random fixture into a real ConfigCache through its public API, so the report is
/// tested from a database exactly as `ktune report` reads one.

#include <filesystem>
#include <map>

#include "report_fixture.hpp"

namespace ktune::reports::testing {

/// Records every fixture measurement (grouped by run, GPU and kernel, one transaction a group)
/// and names the fixture's winners. Returns fixture id -> database id.
std::map<int64_t, int64_t> write_fixture_db(const Fixture& fixture, const std::filesystem::path& db_path);

/// A fresh temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ktune::reports::testing
