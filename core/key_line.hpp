#pragma once
/// One tuning key as a line of text: `KERNEL SHAPE DTYPE [LAYOUT]`, fields separated by spaces, e.g.
///   gemm m=16,n=4096,k=4096 bf16 nt
///   rmsnorm rows=7,hidden=4095 f16
/// A missing LAYOUT means the kernel's default (the only layout that can be empty is a default).
/// Lines that are blank or start with '#' are comments. The dispatch runtime appends the keys it
/// could not serve from a tuned config in this form (RuntimeOptions::record_misses), and
/// `ktune tune --shapes FILE` tunes a file of them (tuner/inputs/key_list.hpp): one format, defined here.

#include <optional>
#include <string>
#include <string_view>

#include "ktune/dtype.hpp"

namespace ktune {

struct KeyLine {
  std::string kernel;
  std::string shape;  ///< as written (`m=16,n=4096,k=4096`)
  DType dtype = DType::kF32;
  std::optional<std::string> layout;  ///< absent: the kernel's default

  bool operator==(const KeyLine&) const = default;
};

/// The line of `key` (no newline), the dtype by its name. Throws ktune::Error(kBadInput) when a
/// field is empty (the layout may be) or holds white space or '#'.
std::string format_key_line(const KeyLine& key);

/// Whether `line` is a key line (not a comment): three or four fields, the second a shape
/// (`name=integer[,name=integer...]`). False for comments and for anything else, e.g. TOML.
bool is_key_line(std::string_view line);

/// The key of `line`; nullopt for a blank or comment line. Throws ktune::Error(kBadInput) naming
/// what is wrong (the field count, a shape that does not parse, a dtype no DType is named).
std::optional<KeyLine> parse_key_line(std::string_view line);

}  // namespace ktune
