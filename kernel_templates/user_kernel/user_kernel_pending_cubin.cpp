#include "kernel_templates/user_kernel/user_kernel_pending_cubin.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "kernel_templates/user_kernel/user_kernel_prebuilt_reader.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

constexpr std::chrono::milliseconds kPoll{5};

/// What tells one version of the index from another: the compiler replaces the file whole (a new
/// inode each time), and a file time alone is too coarse for two rewrites a few ms apart.
struct Version {
  ino_t inode = 0;
  int64_t mtime_ns = 0;
  int64_t size = -1;
  bool operator==(const Version&) const = default;
};

Version version_of(const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  return {st.st_ino, int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
          static_cast<int64_t>(st.st_size)};
}

bool same_cubin(const UserCubin& a, const UserCubin& b) {
  return a.config == b.config && a.dtype == b.dtype && a.ones == b.ones && a.aligned == b.aligned;
}

}  // namespace

UserCubin await_pending_cubin(const UserKernelDescription& d, const UserCubin& pending,
                              std::chrono::milliseconds idle) {
  const auto index = cubin_index(cubin_folder(d.toml_path.parent_path(), d.name));
  Version seen;
  auto changed_at = std::chrono::steady_clock::now();
  for (;;) {
    const Version now = version_of(index);
    if (!(now == seen)) {
      seen = now;
      changed_at = std::chrono::steady_clock::now();
      const UserPrebuilt listed = reread_cubin_index(d);
      const auto it = std::find_if(listed.cubins.begin(), listed.cubins.end(),
                                   [&](const UserCubin& c) { return same_cubin(c, pending); });
      if (it == listed.cubins.end())
        throw Error(ErrorKind::kRuntime,
                    fmt::format("{}: the pending cubin {} left the index before it was compiled",
                                index.string(), pending.file.filename().string()));
      if (!it->pending) return *it;
    }
    if (std::chrono::steady_clock::now() - changed_at > idle)
      throw Error(ErrorKind::kRuntime,
                  fmt::format("{}: the cubin {} is still pending after {} s without a change of the index "
                              "(did the process compiling it stop?)",
                              index.string(), pending.file.filename().string(),
                              std::chrono::duration_cast<std::chrono::seconds>(idle).count()));
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace ktune::kernel_templates
