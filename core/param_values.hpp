#pragma once
/// The values of one template parameter in the config-space language, read the same way by the
/// shipped spaces (tuner/space/config_space_reader.cpp) and by user kernel descriptions
/// (kernel_templates/user_kernel/user_kernel_reader.cpp): a list of integers,
/// `{pow2 = [min, max]}` (powers of two), or `{start, stop, step}` (step 1 by default).

#include <cstdint>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace ktune::toml_read {

/// The values `node` lists, each once. `what` names the parameter in messages ("parameter 'BLOCK_M'",
/// "template.params.TILE"); a range of `max_values` values or more is refused. Every error is a
/// ktune::Error(kBadInput) "FILE:LINE: what: message".
std::vector<int64_t> read_param_values(const toml::node& node, const std::string& file,
                                       const std::string& what, uint64_t max_values);

}  // namespace ktune::toml_read
