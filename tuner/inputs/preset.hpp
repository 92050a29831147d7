#pragma once
/// Presets (configs/presets/<name>.toml): a named tuning job — kernel, dtypes, layout, strategy,
/// budget and the shapes, chosen from shape sets with optional layer and expression filters
/// (`ktune tune --preset quick`). Format: docs/config-spaces.md.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/dtype.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/search/search_strategy.hpp"

namespace ktune::tuner {

struct Preset {
  std::string name;  ///< file stem, e.g. "quick"
  std::string description;
  std::string source;  ///< the file read
  std::string kernel;
  std::vector<std::string> dims;   ///< the kernel's dimensions (from the shape sets)
  std::vector<DType> dtypes;       ///< e.g. {kBF16}
  std::string layout;              ///< e.g. "nt"; "" when the kernel has none
  std::string strategy = "model";  ///< a name of strategies() (tuner/search/search_strategy.hpp)
  size_t budget = 0;               ///< measurements per (shape, dtype); 0 = no limit
  uint64_t seed = StrategyOptions{}.seed;
  std::vector<NamedShape> shapes;  ///< unique by canonical text, in selection order
};

/// Reads configs/presets/<name>.toml (or the file `name_or_path` names). Throws
/// ktune::Error(kBadInput) "FILE:LINE: ..." naming the bad part, or listing the known presets for
/// an unknown name.
Preset load_preset(std::string_view name_or_path);

/// The names of the presets in configs/presets/, sorted.
std::vector<std::string> list_presets();

}  // namespace ktune::tuner
