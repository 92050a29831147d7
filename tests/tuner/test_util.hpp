#pragma once
// Helpers for the tuner tests: temporary files and checking a kBadInput error's text.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/config.hpp"
#include "ktune/error.hpp"

namespace ktune::tuner {

/// Lets GoogleTest print configs in failures.
inline void PrintTo(const Config& c, std::ostream* os) { *os << c.key(); }

}  // namespace ktune::tuner

namespace ktune::tuner::test {

/// A file that exists while the object lives.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text) {
    static std::atomic<int> counter{0};
    dir_ = std::filesystem::temp_directory_path() /
           ("ktune_tuner_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    path_ = dir_ / name;
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path path_;
};

/// Runs `fn`, expects ktune::Error(kBadInput) whose message contains every one of `parts`.
inline void expect_bad_input(const std::function<void()>& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected ktune::Error(kBadInput), nothing was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "'" << p << "' not in: " << e.what();
  }
}

/// The source tree's configs/ (KTUNE_SOURCE_DIR is set by ctest).
inline std::filesystem::path source_configs() {
  const char* src = std::getenv("KTUNE_SOURCE_DIR");
  return std::filesystem::path(src ? src : ".") / "configs";
}

}  // namespace ktune::tuner::test
