#pragma once
/// Fuzz input written to a file, for the loaders that take a path (presets, shape sets, exports).
/// One file per process under $TMPDIR (or /tmp), rewritten for each input, removed at exit.

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ktune::fuzz {

class InputFile {
 public:
  /// `suffix`, e.g. ".toml": some loaders decide by the extension that the text names a file.
  explicit InputFile(const std::string& suffix) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
            ("ktune-fuzz-" + std::to_string(::getpid()) + suffix);
  }
  ~InputFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// Replaces the file's contents with `data`; returns its path.
  const std::filesystem::path& write(const uint8_t* data, size_t size) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) std::abort();  // the machine's fault, not the parser's
    return path_;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ktune::fuzz
