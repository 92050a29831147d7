#pragma once
/// Runs Debian's chromium headless on a local page with no network and returns the DOM after the
/// page's scripts ran (--dump-dom under a virtual-time budget) plus chromium's log (console
/// messages included).

#include <filesystem>
#include <optional>
#include <string>

namespace ktune::reports::testing {

/// The chromium binary: $KTUNE_CHROMIUM, else chromium / chromium-browser / google-chrome on PATH.
std::optional<std::filesystem::path> find_chromium();

struct BrowserResult {
  int exit_code = -1;
  std::string dom;  ///< the serialized DOM
  std::string log;  ///< chromium's stderr
};

/// Loads `url` (a file:// URL, fragment allowed) headless with a fresh profile under `work_dir`,
/// every host resolving to nothing, a 1280x2400 window and `budget_ms` of virtual time.
BrowserResult run_headless(const std::filesystem::path& chromium, const std::string& url,
                           const std::filesystem::path& work_dir, int budget_ms = 15000);

/// Lines of chromium's log that carry page console output or an uncaught exception. Chromium logs
/// every console level alike (INFO:CONSOLE), and a report page writes nothing to the console, so
/// any such line is a failure.
std::string console_output(const std::string& log);

/// The text of the element with `id` in a serialized DOM (entities &amp; &lt; &gt; &quot; decoded).
std::string element_text(const std::string& dom, const std::string& id);

}  // namespace ktune::reports::testing
