#include "core/param_values.hpp"

#include <set>

#include <fmt/format.h>

#include "core/toml_read.hpp"

namespace ktune::toml_read {

std::vector<int64_t> read_param_values(const toml::node& node, const std::string& file,
                                       const std::string& what, uint64_t max_values) {
  std::vector<int64_t> values;
  if (const toml::table* t = node.as_table()) {
    if (t->contains("pow2")) {
      reject_unknown_keys(*t, {"pow2"}, file, what);
      const auto bounds = require_integer_list(*t->get("pow2"), file, what + " pow2");
      const auto is_pow2 = [](int64_t v) { return v >= 1 && (v & (v - 1)) == 0; };
      if (bounds.size() != 2 || !is_pow2(bounds[0]) || !is_pow2(bounds[1]) || bounds[0] > bounds[1]) {
        fail_at(file, line_of(node),
                fmt::format("{}: pow2 must be [min, max], powers of two with min <= max", what));
      }
      for (int64_t v = bounds[0]; v <= bounds[1]; v *= 2) values.push_back(v);
    } else {
      reject_unknown_keys(*t, {"start", "stop", "step"}, file, what);
      if (!t->contains("start") || !t->contains("stop")) {
        fail_at(file, line_of(node),
                fmt::format("{}: a range needs 'start' and 'stop' (and may have 'step')", what));
      }
      const int64_t start = require_integer(*t->get("start"), file, what + " start");
      const int64_t stop = require_integer(*t->get("stop"), file, what + " stop");
      const int64_t step = t->contains("step") ? require_integer(*t->get("step"), file, what + " step") : 1;
      if (step <= 0 || start > stop) {
        fail_at(file, line_of(node),
                fmt::format("{}: range needs start <= stop and step > 0 (got {}..{} step {})", what, start,
                            stop, step));
      }
      if (static_cast<uint64_t>((stop - start) / step) >= max_values) {
        fail_at(file, line_of(node), fmt::format("{}: range has too many values", what));
      }
      for (int64_t v = start; v <= stop; v += step) values.push_back(v);
    }
  } else {
    values = require_integer_list(node, file, what);
  }
  std::set<int64_t> seen;
  for (int64_t v : values) {
    if (!seen.insert(v).second) fail_at(file, line_of(node), fmt::format("{} lists {} twice", what, v));
  }
  return values;
}

}  // namespace ktune::toml_read
