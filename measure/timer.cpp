#include "measure/timer.hpp"

#include <cstdio>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"

namespace ktune::measure {

EventTimer::EventTimer(CUstream stream) : stream_(stream) {
  KTUNE_CU_CHECK(harness::driver().cuEventCreate(&start_, CU_EVENT_DEFAULT));
  KTUNE_CU_CHECK(harness::driver().cuEventCreate(&stop_, CU_EVENT_DEFAULT));
}

EventTimer::~EventTimer() {
  if (start_) harness::driver().cuEventDestroy(start_);
  if (stop_) harness::driver().cuEventDestroy(stop_);
}

double EventTimer::time_us(const std::function<void()>& body) {
  KTUNE_CU_CHECK(harness::driver().cuEventRecord(start_, stream_));
  body();
  KTUNE_CU_CHECK(harness::driver().cuEventRecord(stop_, stream_));
  KTUNE_CU_CHECK(harness::driver().cuEventSynchronize(stop_));
  float ms = 0;
  KTUNE_CU_CHECK(harness::driver().cuEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1000.0;
}

GraphBatch::GraphBatch(CUstream stream, int launches, const std::function<void(int)>& launch)
    : stream_(stream), launches_(launches) {
  KTUNE_CU_CHECK(harness::driver().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  try {
    for (int i = 0; i < launches_; ++i) launch(i);
  } catch (...) {
    CUgraph partial = nullptr;
    harness::driver().cuStreamEndCapture(stream_, &partial);
    if (partial) harness::driver().cuGraphDestroy(partial);
    throw;
  }
  KTUNE_CU_CHECK(harness::driver().cuStreamEndCapture(stream_, &graph_));
  KTUNE_CU_CHECK(harness::driver().cuGraphInstantiateWithFlags(&exec_, graph_, 0));
}

GraphBatch::~GraphBatch() {
  if (exec_) harness::driver().cuGraphExecDestroy(exec_);
  if (graph_) harness::driver().cuGraphDestroy(graph_);
}

void GraphBatch::launch() { KTUNE_CU_CHECK(harness::driver().cuGraphLaunch(exec_, stream_)); }

}  // namespace ktune::measure
