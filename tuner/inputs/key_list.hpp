#pragma once
/// A key list: a file of tuning keys, one a line as `KERNEL SHAPE DTYPE [LAYOUT]`
/// (core/key_line.hpp), such as the dispatch runtime records for the keys it served without a
/// tuned config (RuntimeOptions::record_misses). `ktune tune --shapes FILE` takes one as it takes
/// a shape set, and tunes exactly its keys, each with its own kernel, dtype and layout.

#include <filesystem>
#include <string>
#include <vector>

#include "core/key_line.hpp"

namespace ktune::tuner {

/// One key of the file and the line it came from.
struct ListedKey {
  KeyLine key;
  int line = 0;
};

/// Whether `file` is a key list rather than a TOML shape set: its first line that is not blank or a
/// comment is a key line, or it has no such line (a recorded file before its first miss). False
/// for a file that cannot be read (the shape-set reader says why).
bool is_key_list(const std::filesystem::path& file);

/// The keys of `file` in file order, repeats included (the session drops them). Throws
/// ktune::Error(kBadInput) "FILE:LINE: ..." naming the bad line, or when the file cannot be read.
std::vector<ListedKey> load_key_list(const std::filesystem::path& file);

}  // namespace ktune::tuner
