#pragma once
/// A key list: a file of tuning keys, one a line as `KERNEL SHAPE DTYPE [LAYOUT]`
/// (core/key_line.hpp), such as the dispatch runtime records for the keys it served without a
/// tuned config (RuntimeOptions::record_misses). `ktune tune --shapes FILE` takes one as it takes
/// a shape set, and tunes exactly its keys, each with its own kernel, dtype and layout.

#include <filesystem>
#include <string>
#include <string_view>
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

/// Whether `kernel` names a Triton kernel of a Python module, `triton:MODULE:FUNCTION`, as
/// ktune.triton.autotune records its misses (python/ktune/triton/misses.py).
bool is_triton_kernel(std::string_view kernel);

/// Throws ktune::Error(kBadInput) when `keys` (of `file`) hold a Triton kernel's key: ktune cannot
/// import the module that describes it, so the message names the first such line, how many there
/// are, and the command that tunes the file, Triton keys and the others alike:
/// `python3 -m ktune.triton tune FILE`.
void refuse_triton_keys(const std::vector<ListedKey>& keys, const std::filesystem::path& file);

}  // namespace ktune::tuner
