/// The /metrics GPU gauges (service/gpu_gauges.hpp) from a fake sensor source: the exact text, and
/// that a value the source cannot read is left out rather than written as 0.

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "service/gpu_gauges.hpp"

namespace ktune::service {
namespace {

/// A source that answers from a table and records which GPUs it was asked about.
struct FakeSensors {
  std::map<int, GpuSensorReading> table;
  std::vector<int> asked;

  GpuSensorSource source() {
    return [this](int ordinal) {
      asked.push_back(ordinal);
      const auto it = table.find(ordinal);
      return it == table.end() ? GpuSensorReading{} : it->second;
    };
  }
};

TEST(GpuGauges, BothFamiliesOneSampleAGpu) {
  FakeSensors fake;
  fake.table[0] = {1980.0, 41.0};
  fake.table[3] = {1755.0, 67.0};
  const std::string text = gpu_gauges_text(fake.source(), {0, 3});
  EXPECT_EQ(text,
            "# HELP ktune_gpu_sm_clock_mhz Current SM clock of a GPU jobs measure on (NVML).\n"
            "# TYPE ktune_gpu_sm_clock_mhz gauge\n"
            "ktune_gpu_sm_clock_mhz{gpu=\"0\"} 1980\n"
            "ktune_gpu_sm_clock_mhz{gpu=\"3\"} 1755\n"
            "# HELP ktune_gpu_temperature_celsius Core temperature of a GPU jobs measure on (NVML).\n"
            "# TYPE ktune_gpu_temperature_celsius gauge\n"
            "ktune_gpu_temperature_celsius{gpu=\"0\"} 41\n"
            "ktune_gpu_temperature_celsius{gpu=\"3\"} 67\n");
  EXPECT_EQ(fake.asked, (std::vector<int>{0, 3}));  // each GPU read once a scrape
}

TEST(GpuGauges, AnUnreadableValueIsLeftOutNotZero) {
  FakeSensors fake;
  fake.table[0] = {1410.5, std::nullopt};  // NVML answered the clock but not the temperature
  fake.table[1] = {};                      // nothing readable
  const std::string text = gpu_gauges_text(fake.source(), {0, 1});
  EXPECT_EQ(text,
            "# HELP ktune_gpu_sm_clock_mhz Current SM clock of a GPU jobs measure on (NVML).\n"
            "# TYPE ktune_gpu_sm_clock_mhz gauge\n"
            "ktune_gpu_sm_clock_mhz{gpu=\"0\"} 1410.5\n");
  EXPECT_EQ(text.find("temperature"), std::string::npos);
  EXPECT_EQ(text.find("gpu=\"1\""), std::string::npos);
}

TEST(GpuGauges, NoGpuOrNoSourceMeansNoGaugeAtAll) {
  FakeSensors fake;
  EXPECT_EQ(gpu_gauges_text(fake.source(), {}), "");
  EXPECT_EQ(gpu_gauges_text(fake.source(), {0, 1}), "");  // a host where NVML reads nothing
  EXPECT_EQ(gpu_gauges_text(GpuSensorSource{}, {0}), "");
}

}  // namespace
}  // namespace ktune::service
