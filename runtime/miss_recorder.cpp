#include "runtime/miss_recorder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::runtime {
namespace {

/// write(2) until `text` is out (a regular file takes it in one call; EINTR retried).
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// flock for the life of the object.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    for (;;) {
      if (::flock(fd_, LOCK_EX) == 0) {
        ok_ = true;
        return;
      }
      if (errno != EINTR) return;
    }
  }
  ~FileLock() {
    if (ok_) ::flock(fd_, LOCK_UN);
  }
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = false;
};

/// Lines written so far, by file, for the whole process.
std::mutex g_seen_mutex;
std::map<std::string, std::set<std::string>>& seen_lines() {
  static std::map<std::string, std::set<std::string>> seen;
  return seen;
}

}  // namespace

MissRecorder::MissRecorder(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("cannot open {} to record missed keys: {}", path.string(), std::strerror(errno)));
  }
  struct stat st {};
  const bool stated = ::fstat(fd_, &st) == 0;
  file_id_ = stated ? fmt::format("{}:{}", st.st_dev, st.st_ino) : path.string();
  const bool empty = stated && st.st_size == 0;
  // An empty file holds none of the lines written before: a file deleted and made again (whose
  // inode number may be the old one's) or truncated. Forget them, or they would never be written.
  if (empty) {
    std::lock_guard seen_lock(g_seen_mutex);
    seen_lines().erase(file_id_);
  }
}

MissRecorder::~MissRecorder() {
  if (fd_ >= 0) ::close(fd_);
}

size_t MissRecorder::written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

bool MissRecorder::record(const KeyLine& key) noexcept {
  try {
    const std::string line = format_key_line(key) + "\n";
    std::lock_guard lock(mutex_);
    std::lock_guard seen_lock(g_seen_mutex);  // every recorder of the process, any file
    std::set<std::string>& seen = seen_lines()[file_id_];
    if (seen.contains(line)) return false;
    const FileLock file_lock(fd_);
    bool ok = file_lock.ok();
    struct stat st {};
    if (ok && ::fstat(fd_, &st) == 0 && st.st_size == 0) ok = write_all(fd_, kMissFileHeader);
    ok = ok && write_all(fd_, line);
    if (!ok) {
      if (!warned_) {
        std::fprintf(stderr, "ktune::Runtime: cannot record a missed key in %s: %s\n", path_.c_str(),
                     std::strerror(errno));
        warned_ = true;
      }
      return false;
    }
    seen.insert(line);
    ++written_;
    return true;
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    if (!warned_) {
      std::fprintf(stderr, "ktune::Runtime: cannot record a missed key: %s\n", e.what());
      warned_ = true;
    }
    return false;
  }
}

}  // namespace ktune::runtime
