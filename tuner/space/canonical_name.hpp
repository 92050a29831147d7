#pragma once
/// Canonical config names (docs/design.md "Names and outcomes"): `KERNEL.DTYPE[.LAYOUT].PATTERN`, e.g.
/// `gemm.bf16.nt.128x128x32.w2x2.s3.sk1`, where PATTERN is the template's name pattern from its
/// space file ("{BLOCK_M}x{BLOCK_N}x{BLOCK_K}.w{WARPS_M}x{WARPS_N}.s{STAGES}.sk{SPLIT_K}") with each
/// {PARAM} replaced by the config's value. One name a config: it is the report row id and log key.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "ktune/dtype.hpp"

namespace ktune::tuner {

/// The placeholders of `pattern` in order. Throws std::invalid_argument for an unbalanced brace, an
/// empty placeholder, or two placeholders not separated by a character other than a digit or '-'
/// (without one, "{A}{B}" names A=1,B=12 and A=11,B=2 alike).
std::vector<std::string> pattern_placeholders(std::string_view pattern);

/// Checks that `pattern` is well formed and names each of `params` and nothing else; returns ""
/// when it is, else the reason.
std::string check_name_pattern(std::string_view pattern, std::span<const std::string> params);

/// `pattern` with each {PARAM} replaced by `config`'s value; throws ktune::Error(kBadInput) naming a
/// placeholder the config lacks.
std::string expand_name_pattern(std::string_view pattern, const Config& config);

/// `kernel.dtype[.layout].<expanded pattern>`; the layout is left out when empty.
std::string canonical_name(std::string_view kernel, DType dtype, std::string_view layout,
                           std::string_view pattern, const Config& config);

}  // namespace ktune::tuner
