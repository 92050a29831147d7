#pragma once
/// Outputs are poisoned before every verified run (docs/design.md D4): every byte 0xFF, which is a NaN in
/// f32, f16, bf16, fp8e4m3 and fp8e5m2, so an element the kernel never writes fails verification as
/// a non-finite output instead of passing with a stale value.

#include <cuda.h>

#include <cstdint>

namespace ktune::measure {

inline constexpr uint8_t kPoisonByte = 0xFF;
/// An integer reference output's poison: integers have no NaN, so the reference side gets another
/// byte than the candidate's, and an element neither kernel wrote differs instead of matching.
inline constexpr uint8_t kIntegerReferencePoisonByte = 0xFE;

/// Poisons `bytes` at `ptr` on `stream` (asynchronous).
void poison(CUdeviceptr ptr, uint64_t bytes, CUstream stream, uint8_t byte = kPoisonByte);

}  // namespace ktune::measure
