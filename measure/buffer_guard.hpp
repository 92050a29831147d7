#pragma once
/// Guard regions around every candidate buffer (docs/byo.md, D4): each buffer is allocated with
/// kGuardBytes before and after it, filled with kGuardByte before the first run and checked after
/// it, so a kernel that writes just past the end (or before the start) of a buffer is `incorrect`
/// with the buffer named instead of silently corrupting a neighbour. 256 bytes keep every buffer
/// as aligned as cuMemAlloc's (256-byte) base, which TMA and vector loads rely on.

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ktune::measure {

struct BufferSet;

inline constexpr uint64_t kGuardBytes = 256;
inline constexpr uint8_t kGuardByte = 0xA5;  ///< not the poison byte (0xFF), not zero

/// Fills the guards of every buffer of `set` on `stream` (asynchronous).
void write_guards(const BufferSet& set, CUstream stream);

/// Synchronises `stream` and reads every guard back: the first buffer whose guard changed, as
/// "a write past the end of buffer 'y' (12 of 256 guard bytes changed)", or nullopt.
std::optional<std::string> check_guards(const BufferSet& set, CUstream stream);

}  // namespace ktune::measure
