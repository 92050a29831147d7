#pragma once
/// The body of `ktune worker` (docs/design.md D5): says hello on protocol fd `fd` (with the device, or
/// with why it cannot measure), then answers every kMeasure with a kResult until kShutdown or the
/// end of the stream. After a candidate that lost the CUDA context it answers (with
/// "worker_ok": false) and exits, so the parent starts a fresh worker.

namespace ktune::measure {

/// Exit status after a lost context (distinct from crashes, which end by signal).
inline constexpr int kWorkerContextLostExit = 3;

/// Runs the worker loop on device `ordinal`; returns the process exit status.
int run_worker(int fd, int ordinal);

}  // namespace ktune::measure
