#pragma once
/// Records the keys the dispatch runtime served without a tuned config (a nearest tuned shape or a
/// default config) into a file that `ktune tune --shapes FILE` tunes: record in production, then
/// tune exactly what was missed. One line a key in the key-line form (core/key_line.hpp), e.g.
/// `gemm m=24,n=4096,k=4096 bf16 nt`; a key is written once a process (what was written to a file is
/// remembered process-wide, so two Runtimes that share a file do not repeat each other). Several
/// processes may append to one file: each line is one write(2) to a file opened
/// with O_APPEND, under an exclusive flock(2) that also guards the header a new file gets, so lines
/// never interleave or tear. Different processes may each write a key once; the tuner's reader
/// drops repeats.

#include <filesystem>
#include <mutex>
#include <string>

#include "core/key_line.hpp"

namespace ktune::runtime {

class MissRecorder {
 public:
  /// Opens (creating, mode 0644) `path` for appending. Throws ktune::Error(kBadInput) naming the
  /// path and errno's text when it cannot be opened (a missing folder, no permission).
  explicit MissRecorder(const std::filesystem::path& path);
  ~MissRecorder();
  MissRecorder(const MissRecorder&) = delete;
  MissRecorder& operator=(const MissRecorder&) = delete;

  /// Appends `key` unless this process wrote it to the file before. Returns true when a line was
  /// written.
  /// Never throws: a failed write (a full disk) is said once on stderr and returns false, since a
  /// miss record must not break the launch that caused it. Thread-safe.
  bool record(const KeyLine& key) noexcept;

  const std::filesystem::path& path() const { return path_; }
  /// Keys written by this recorder.
  size_t written() const;

 private:
  std::filesystem::path path_;
  std::string file_id_;  ///< the file's device and inode: one per file however it is named
  int fd_ = -1;
  mutable std::mutex mutex_;
  size_t written_ = 0;
  bool warned_ = false;
};

/// The header a new file starts with (a comment line).
inline constexpr const char* kMissFileHeader =
    "# keys ktune::Runtime served without a tuned config: KERNEL SHAPE DTYPE [LAYOUT]; tune them with "
    "`ktune tune --shapes THIS_FILE`\n";

}  // namespace ktune::runtime
