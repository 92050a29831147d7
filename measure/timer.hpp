#pragma once
/// GPU timing with CUDA events (docs/measurement.md "Timing protocol"). One sample = an event pair around
/// either one eager launch or one CUDA-graph launch of a batch of N kernel launches (kernels under
/// ~10 us: an eager launch costs ~4.3 us of host time on the H200, so a lone short kernel would be
/// timed together with launch gaps; inside a graph the launches are back to back). Per-launch time
/// is the pair's elapsed time / N.

#include <cuda.h>

#include <functional>

namespace ktune::measure {

/// An event pair on one stream.
class EventTimer {
 public:
  explicit EventTimer(CUstream stream);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  /// Records start, calls `body` (which enqueues work on the stream), records stop, waits for stop
  /// and returns the elapsed microseconds.
  double time_us(const std::function<void()>& body);

 private:
  CUstream stream_;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
};

/// A CUDA graph holding `launches` back-to-back calls of `launch(i)` captured from `stream`.
class GraphBatch {
 public:
  GraphBatch(CUstream stream, int launches, const std::function<void(int)>& launch);
  ~GraphBatch();
  GraphBatch(const GraphBatch&) = delete;
  GraphBatch& operator=(const GraphBatch&) = delete;

  /// Enqueues the whole batch on the stream it was captured from.
  void launch();
  int launches() const { return launches_; }

 private:
  CUstream stream_;
  int launches_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace ktune::measure
