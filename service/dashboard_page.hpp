#pragma once
/// The dashboard `GET /` serves: one self-contained HTML page (style and script inline, nothing
/// fetched from elsewhere) that reads the server's own JSON routes: the GPUs (/v1/devices), the
/// jobs with their live progress (/v1/jobs, and /v1/jobs/{id}/events for the running ones), the
/// latest winners (/v1/report?format=json&winners=true) and links to the reports. It only reads, so
/// it works without a token and on a --read-only server. The page is the file
/// service/assets/dashboard.html, embedded at build time.

#include <cstddef>
#include <string_view>

namespace ktune::service {

/// The dashboard page's HTML.
std::string_view dashboard_page();

namespace detail {
/// One embedded asset (cmake/embed_files.cmake writes the table into dashboard_assets_data.cpp).
struct EmbeddedFile {
  std::string_view name;  ///< file name, e.g. "dashboard.html"
  std::string_view text;
};
extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kEmbeddedFileCount;
}  // namespace detail

}  // namespace ktune::service
