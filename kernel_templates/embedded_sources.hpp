#pragma once
/// Kernel template sources (`*.cu`, `*.cuh`), embedded into the binary at
/// build time (D1; cmake/embed_files.cmake writes the table), optionally overlaid at run
/// time by the files of a user folder: a file there replaces the built-in file of the same name or adds
/// a new one. NVRTC gets a template's text plus every `.cuh` as an include header.

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune::kernel_templates {

/// One built-in file.
struct EmbeddedFile {
  std::string_view name;  ///< file name without folder, e.g. "gemm_tiled.cu"
  std::string_view text;
};

/// Every built-in file, in build order.
std::span<const EmbeddedFile> embedded_files();

/// Template sources by file name. Cheap to copy; immutable once built.
class SourceLibrary {
 public:
  /// The built-in files only.
  static SourceLibrary builtin();
  /// The built-in files overlaid by the `.cu`, `.cuh` and `.toml` files directly in `folder`.
  /// Throws ktune::Error(kBadInput) when `folder` is not a readable directory.
  static SourceLibrary with_folder(const std::filesystem::path& folder);
  /// with_folder($KTUNE_TEMPLATE_DIR) when that variable is set and not empty, else builtin(); plus
  /// the loaded user kernels' NAME.cu (as UserKernelSpec::compile_text) and NAME.toml.
  static SourceLibrary from_environment();

  /// Whether a file of that name exists.
  bool contains(std::string_view name) const;
  /// The file's text; throws ktune::Error(kNotFound) naming it and the known files.
  const std::string& text(std::string_view name) const;
  /// Every file name, sorted.
  std::vector<std::string> names() const;
  /// Every `.cuh` as (include name, text), the form harness::CompileRequest::headers takes.
  std::vector<std::pair<std::string, std::string>> headers() const;
  /// The files of this library that `names` include, directly or through each other
  /// (`#include "NAME"` lines naming a file here; toolkit headers are not), sorted.
  std::vector<std::string> included_files(std::span<const std::string> names) const;
  /// Hex xxHash3-64 of the named files and every file they include (included_files; names and
  /// texts): the "template source hash" of a kernel, which changes whenever anything its sources
  /// include changes, and only then: a header no source of the kernel includes leaves it alone.
  std::string hash(std::span<const std::string> names) const;
  /// The folder files came from ("" for builtin()).
  const std::filesystem::path& overlay_folder() const { return folder_; }

 private:
  std::map<std::string, std::string, std::less<>> files_;
  std::filesystem::path folder_;
};

namespace detail {
// Defined in the generated embedded_sources_data.cpp.
extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kEmbeddedFileCount;
}  // namespace detail

}  // namespace ktune::kernel_templates
