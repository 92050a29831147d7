#include "core/buffer_fill.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ktune {
namespace {

/// Sequence values stay below 2^62 in magnitude before the modulo, so the fill kernel's
/// start + i x step never overflows its 64-bit arithmetic.
constexpr double kSequenceBound = 4.611686018427387904e18;

bool is_integer(double v) { return std::isfinite(v) && v == std::floor(v); }

/// Floating-point fills are made in f32 on the device (then narrowed to the buffer's type).
bool fits_f32(double v) { return std::abs(v) <= std::numeric_limits<float>::max(); }

std::optional<std::string> out_of(IntType type, double v) {
  // max_value(kI64) is 2^63 as a double, one past the largest i64.
  const bool past_i64 = type == IntType::kI64 && v >= max_value(type);
  if (v < min_value(type) || v > max_value(type) || past_i64)
    return fmt::format("{} does not fit {} [{}, {}]", v, to_string(type), min_value(type), max_value(type));
  return std::nullopt;
}

int64_t sequence_value(const BufferFill& f, int64_t i) {
  const int64_t v = f.start + i * f.step;
  if (!f.modulo) return v;
  const int64_t r = v % *f.modulo;
  return r < 0 ? r + *f.modulo : r;
}

}  // namespace

BufferFill BufferFill::random(double scale) {
  BufferFill f;
  f.scale = scale;
  return f;
}

BufferFill BufferFill::range(double min, double max) {
  BufferFill f;
  f.kind = Kind::kRange;
  f.min = min;
  f.max = max;
  return f;
}

BufferFill BufferFill::repeat(std::vector<double> values) {
  BufferFill f;
  f.kind = Kind::kPattern;
  f.pattern = std::move(values);
  return f;
}

BufferFill BufferFill::sequence(int64_t start, int64_t step, std::optional<int64_t> modulo) {
  BufferFill f;
  f.kind = Kind::kSequence;
  f.start = start;
  f.step = step;
  f.modulo = modulo;
  return f;
}

BufferFill BufferFill::file(std::string path) {
  BufferFill f;
  f.kind = Kind::kFile;
  f.path = std::move(path);
  return f;
}

std::optional<std::string> BufferFill::invalid_reason(uint64_t count, std::optional<IntType> integer) const {
  switch (kind) {
    case Kind::kRandom:
      if (integer) {
        return fmt::format(
            "an {} input needs a range, a pattern or a sequence: random integers would index "
            "anywhere",
            to_string(*integer));
      }
      if (!(scale > 0) || !std::isfinite(scale))
        return fmt::format("scale {} is not a positive number", scale);
      return std::nullopt;
    case Kind::kRange:
      if (!std::isfinite(min) || !std::isfinite(max)) return "a range needs finite bounds";
      if (min == 0 && max == 0) return "the range [0, 0] can only produce zeros (inputs are never all zeros)";
      if (integer) {
        if (!is_integer(min) || !is_integer(max))
          return fmt::format("an {} range needs integer bounds (got [{}, {}])", to_string(*integer), min,
                             max);
        if (min > max) return fmt::format("the range [{}, {}] is empty (min > max)", min, max);
        if (auto why = out_of(*integer, min)) return why;
        return out_of(*integer, max);
      }
      if (!fits_f32(min) || !fits_f32(max)) return fmt::format("the range [{}, {}) exceeds f32", min, max);
      if (!(min < max))
        return fmt::format("the range [{}, {}) is empty: a range needs min < max (a constant is a pattern)",
                           min, max);
      return std::nullopt;
    case Kind::kPattern:
      if (pattern.empty() || pattern.size() > kMaxPatternValues)
        return fmt::format("a pattern holds 1 to {} values (got {})", kMaxPatternValues, pattern.size());
      if (std::all_of(pattern.begin(), pattern.end(), [](double v) { return v == 0; }))
        return "the pattern is all zeros (inputs are never all zeros)";
      if (count < pattern.size() &&
          std::all_of(pattern.begin(), pattern.begin() + static_cast<std::ptrdiff_t>(count),
                      [](double v) { return v == 0; })) {
        return fmt::format("the pattern's first {} values, all this buffer holds, are zeros", count);
      }
      for (double v : pattern) {
        if (!std::isfinite(v) || !fits_f32(v)) return fmt::format("pattern value {} is not a finite f32", v);
        if (integer && !is_integer(v))
          return fmt::format("pattern value {} is not an integer ({} buffer)", v, to_string(*integer));
        if (integer) {
          if (auto why = out_of(*integer, v)) return why;
        }
      }
      return std::nullopt;
    case Kind::kSequence: {
      if (!integer) return "a sequence fills an integer buffer (type i32, i64 or u8)";
      if (modulo && *modulo < 1) return fmt::format("the modulo {} is not positive", *modulo);
      const double last = static_cast<double>(start) +
                          static_cast<double>(count > 0 ? count - 1 : 0) * static_cast<double>(step);
      if (std::abs(static_cast<double>(start)) >= kSequenceBound || std::abs(last) >= kSequenceBound)
        return fmt::format("start + i x step reaches {} (beyond +-2^62)", last);
      // Into [0, 1) the only index is 0 (a table of one block): that is the buffer's one legal content.
      const bool one_index = modulo && *modulo == 1;
      if (!one_index && sequence_value(*this, 0) == 0 && (count == 1 || sequence_value(*this, 1) == 0))
        return "the sequence can only produce zeros (inputs are never all zeros)";
      if (modulo) return out_of(*integer, static_cast<double>(*modulo - 1));
      if (auto why = out_of(*integer, static_cast<double>(start))) return why;
      return out_of(*integer, last);
    }
    case Kind::kFile:
      if (path.empty()) return "a file fill needs a path";
      return std::nullopt;
  }
  return std::nullopt;
}

std::string BufferFill::describe() const {
  switch (kind) {
    case Kind::kRandom:
      return fmt::format("random x{}", scale);
    case Kind::kRange:
      return fmt::format("range [{}, {}]", min, max);
    case Kind::kPattern:
      return fmt::format("pattern [{}]", fmt::join(pattern, ", "));
    case Kind::kSequence:
      return modulo ? fmt::format("sequence {} + {} i mod {}", start, step, *modulo)
                    : fmt::format("sequence {} + {} i", start, step);
    case Kind::kFile:
      return "file " + path;
  }
  return "?";
}

}  // namespace ktune
