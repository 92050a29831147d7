#include "tuner/loop/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ostream>

#include <fmt/format.h>

namespace ktune::tuner {
namespace {

/// Redraw interval: often enough to look alive, rarely enough to cost nothing (10 Hz).
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

std::string duration_text(double seconds) {
  if (seconds < 0 || seconds > 1e7) return "?";
  const auto s = static_cast<long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace

Progress::Progress(std::ostream& out, bool enabled) : out_(out), enabled_(enabled) {}

bool Progress::stderr_wants_progress() {
  if (::isatty(STDERR_FILENO) == 0) return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  const char* off = std::getenv("KTUNE_NO_PROGRESS");
  return off == nullptr || *off == '\0';
}

void Progress::begin(std::size_t total) {
  std::lock_guard lock(mutex_);
  total_ = total;
  done_ = 0;
  start_ = std::chrono::steady_clock::now();
}

void Progress::set_key(std::string key) {
  std::lock_guard lock(mutex_);
  key_ = std::move(key);
  best_.clear();
  draw(true);
}

void Progress::advance(std::size_t n) {
  std::lock_guard lock(mutex_);
  done_ += n;
  draw(false);
}

void Progress::set_best(std::string name, double median_us) {
  std::lock_guard lock(mutex_);
  best_ = fmt::format("{} {:.2f} us", name, median_us);
}

void Progress::device_status(int device, bool busy, std::size_t measured) {
  std::lock_guard lock(mutex_);
  devices_[device] = DeviceState{busy, measured};
  draw(false);
}

void Progress::message(const std::string& text) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  out_ << '\r' << std::string(drawn_width_, ' ') << '\r' << text << '\n';
  drawn_width_ = 0;
  draw(true);
}

void Progress::finish() {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  out_ << '\r' << std::string(drawn_width_, ' ') << '\r' << std::flush;
  drawn_width_ = 0;
}

std::size_t Progress::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

std::size_t Progress::total() const {
  std::lock_guard lock(mutex_);
  return std::max(total_, done_);
}

std::string Progress::line() const {
  std::lock_guard lock(mutex_);
  return line_locked();
}

std::string Progress::line_locked() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  const std::size_t total = std::max(total_, done_);
  const double eta = rate > 0 ? static_cast<double>(total - done_) / rate : -1;
  const int percent =
      total > 0 ? static_cast<int>(100.0 * static_cast<double>(done_) / static_cast<double>(total)) : 0;
  std::string s =
      fmt::format("[{}/{}] {}% {:.1f} cfg/s ETA {}", done_, total, percent, rate, duration_text(eta));
  if (!key_.empty()) s += " | " + key_;
  if (devices_.size() > 1) {
    s += " |";
    for (const auto& [device, state] : devices_)
      s += fmt::format(" gpu{} {}{}", device, state.measured, state.busy ? "*" : "");
  }
  if (!best_.empty()) s += " | best " + best_;
  return s;
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  std::string s = line_locked();
  constexpr std::size_t kMaxWidth = 160;  // a wide terminal; longer lines would wrap and not redraw
  if (s.size() > kMaxWidth) s.resize(kMaxWidth);
  const std::size_t pad = drawn_width_ > s.size() ? drawn_width_ - s.size() : 0;
  out_ << '\r' << s << std::string(pad, ' ') << std::flush;
  drawn_width_ = s.size();
}

}  // namespace ktune::tuner
