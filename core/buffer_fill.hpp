#pragma once
/// BufferFill: how an input buffer's values are made before a run, with every number already
/// evaluated for the problem. The values depend on the fill, the element's index and the harness's
/// seed only, so the reference and every candidate read the same inputs. Inputs are never all zeros
/// (DESIGN D4): invalid_reason() refuses a fill that can only produce zeros.
///
/// - kRandom: magnitudes in [0.25, 1) x scale with a random sign (floating-point buffers; the
///   default of every input).
/// - kRange: uniform random values, in [min, max) for a floating-point buffer, integers in
///   [min, max] for an integer one.
/// - kPattern: the values repeated to the buffer's length (at most kMaxPatternValues values).
/// - kSequence: element i is start + i x step, reduced into [0, modulo) when a modulo is given
///   (integer buffers: row indices, block tables).
/// - kFile: the raw little-endian values of the buffer's type in the file at `path`, exactly the
///   buffer's size (inputs made elsewhere, e.g. those a torch reference saw; docs/byo.md). The
///   file is the seed's whole say: every set of inputs reads the same values.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/int_type.hpp"

namespace ktune {

struct BufferFill {
  /// A pattern's values travel to the fill kernel as one by-value argument.
  static constexpr std::size_t kMaxPatternValues = 64;

  enum class Kind { kRandom, kRange, kPattern, kSequence, kFile };
  Kind kind = Kind::kRandom;
  double scale = 1.0;             ///< kRandom
  double min = 0;                 ///< kRange
  double max = 0;                 ///< kRange
  std::vector<double> pattern;    ///< kPattern
  int64_t start = 0;              ///< kSequence
  int64_t step = 1;               ///< kSequence
  std::optional<int64_t> modulo;  ///< kSequence: values reduced into [0, modulo)
  std::string path;               ///< kFile

  static BufferFill random(double scale);
  static BufferFill range(double min, double max);
  static BufferFill repeat(std::vector<double> values);
  static BufferFill sequence(int64_t start, int64_t step, std::optional<int64_t> modulo);
  static BufferFill file(std::string path);

  /// Why this fill cannot fill `count` elements of a buffer of integers of `integer` (nullopt: a
  /// floating-point buffer), or nullopt when it can: it can only produce zeros, a value does not
  /// fit the type, a non-integer value for an integer buffer, an empty range, a random fill of
  /// integers (they would index anywhere), a sequence of floating-point values or a file fill
  /// without a path (its size is checked where the element size is known: the worker).
  std::optional<std::string> invalid_reason(uint64_t count, std::optional<IntType> integer) const;

  /// "random x1", "range [-2, 3]", "pattern [1, -0.5]", "sequence 0 + 1 i mod 512", "file PATH":
  /// for messages.
  std::string describe() const;
};

}  // namespace ktune
