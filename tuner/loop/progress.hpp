#pragma once
/// The progress line of a long sweep on a terminal (docs/design.md: done/total, rate, ETA, best so
/// far; quiet when piped). Redrawn in place with '\r' at most every 100 ms; thread-safe.

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <map>
#include <mutex>
#include <string>

namespace ktune::tuner {

class Progress {
 public:
  /// @param out     where the line goes (stderr in `ktune tune`)
  /// @param enabled false: every call is a no-op (output is not a terminal)
  Progress(std::ostream& out, bool enabled);
  /// Whether stderr is a terminal that should show progress: isatty(2), TERM is not "dumb", and
  /// $KTUNE_NO_PROGRESS is unset.
  static bool stderr_wants_progress();

  bool enabled() const { return enabled_; }
  /// Sets the total number of evaluations planned (resets the count and the clock).
  void begin(std::size_t total);
  /// The key being tuned now, e.g. "gemm m=16,n=4096,k=4096 bf16 nt".
  void set_key(std::string key);
  /// `n` more evaluations done.
  void advance(std::size_t n = 1);
  /// The best result of the current key so far.
  void set_best(std::string name, double median_us);
  /// Live status of one device of a multi-GPU sweep (`--devices`): `busy` while it measures a
  /// candidate; `measured` counts its candidates. With two or more devices the line shows each,
  /// e.g. "gpu0 12* gpu1 11" (* = measuring now).
  void device_status(int device, bool busy, std::size_t measured);
  /// A line printed above the progress line (the line is redrawn after it).
  void message(const std::string& line);
  /// Clears the line.
  void finish();

  /// Evaluations done and planned so far (`ktune serve` reports them per job).
  std::size_t done() const;
  std::size_t total() const;

  /// The line as it would be drawn now (for tests).
  std::string line() const;

 private:
  void draw(bool force);
  std::string line_locked() const;

  std::ostream& out_;
  bool enabled_;
  mutable std::mutex mutex_;
  std::size_t total_ = 0;
  std::size_t done_ = 0;
  std::string key_;
  std::string best_;
  struct DeviceState {
    bool busy = false;
    std::size_t measured = 0;
  };
  std::map<int, DeviceState> devices_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  std::size_t drawn_width_ = 0;
};

}  // namespace ktune::tuner
