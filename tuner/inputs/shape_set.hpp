#pragma once
/// Shape sets (configs/shapes/<name>.toml): the problem shapes of a real model's layers, each swept
/// over values of some dimensions (e.g. M for the batch of tokens). Format: docs/config-spaces.md.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune::tuner {

/// One problem shape with a label saying where it comes from.
struct NamedShape {
  std::string label;  ///< e.g. "llama3-8b.q_proj.m16"
  std::vector<std::pair<std::string, int64_t>> dims;

  /// `m=16,n=4096,k=4096` in this shape's order (the cache's canonical text when normalised).
  std::string canonical() const;
  /// Value of dimension `name`; throws ktune::Error(kBadInput) when absent.
  int64_t at(std::string_view name) const;
  /// The shape reordered to `dims`; throws ktune::Error(kBadInput) naming a missing or unknown one.
  NamedShape normalized(std::span<const std::string> dims) const;
};

/// A model's shapes for one kernel.
struct ShapeSet {
  std::string name;                ///< file stem, e.g. "llama3-8b"
  std::string kernel;              ///< e.g. "gemm"
  std::string model;               ///< e.g. "Llama-3-8B"
  std::string source;              ///< the file read
  std::vector<std::string> dims;   ///< the kernel's dimensions, canonical order
  std::vector<NamedShape> shapes;  ///< layers in file order, each swept in sweep order
};

/// $KTUNE_CONFIGS_DIR when set; else, for an installed ktune (<prefix>/bin/ktune), the
/// <prefix>/share/ktune/configs that `cmake --install` lays out; else the source tree's configs/.
std::filesystem::path configs_dir();

/// A file under configs/<subdir>/: `name_or_path` as given when it names a file (has a '/', ends
/// in .toml, or is an existing file), else configs_dir()/<subdir>/<name>.toml.
std::filesystem::path resolve_config_file(std::string_view name_or_path, std::string_view subdir);

/// The file a *name* in the configs folder stands for, configs_dir()/<subdir>/<name>.toml, and
/// nothing else: never a path, never a file of that name elsewhere (a service's job names what
/// its configs hold; only the command line takes paths). Throws ktune::Error(kBadInput) for a
/// name that is not one (letters, digits, '-', '_', '.'; no "..", no ".toml" ending) or that
/// names no file there, listing the names that are; the message holds no path.
std::filesystem::path named_config_file(std::string_view name, std::string_view subdir);

/// The names of the .toml files in configs_dir()/<subdir>, sorted.
std::vector<std::string> config_names(std::string_view subdir);

/// Reads a shape set. Throws ktune::Error(kBadInput) "FILE:LINE: ..." naming the bad part.
ShapeSet load_shape_set(const std::filesystem::path& file);

}  // namespace ktune::tuner
