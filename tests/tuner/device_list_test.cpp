// `ktune tune --devices`: the list of GPUs whose workers measure in parallel.
#include "tuner/inputs/device_list.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "test_util.hpp"

namespace ktune::tuner {
namespace {

TEST(DeviceList, AllAndListsNameExistingDistinctDevices) {
  EXPECT_EQ(parse_device_list("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_device_list("2,0", 4), (std::vector<int>{2, 0}));  // the first re-times: kept in order
  EXPECT_EQ(parse_device_list("1", 2), (std::vector<int>{1}));
  // The test-only setting: workers sharing each GPU.
  EXPECT_EQ(parse_device_list("0,1", 2, 2), (std::vector<int>{0, 0, 1, 1}));
}

TEST(DeviceList, BadListsAreBadInputNamingThePart) {
  test::expect_bad_input([] { parse_device_list("0,2", 2); }, {"device 2 does not exist", "has 2"});
  test::expect_bad_input([] { parse_device_list("0,0", 2); }, {"device 0 is listed twice"});
  test::expect_bad_input([] { parse_device_list("0,x", 2); }, {"'x' is not a device ordinal"});
  test::expect_bad_input([] { parse_device_list("", 2); }, {"'' is not a device ordinal"});
  test::expect_bad_input([] { parse_device_list("0,", 2); }, {"'' is not a device ordinal"});
  test::expect_bad_input([] { parse_device_list("-1", 2); }, {"'-1' is not a device ordinal"});
  test::expect_bad_input([] { parse_device_list("0", 2, 0); }, {"at least 1"});
  for (const char* list : {"all", "0"}) {
    try {
      parse_device_list(list, 0);
      ADD_FAILURE() << list << " without a device";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kNoDevice) << e.what();
    }
  }
}

// GPUs of different models (or clocks) are refused before any worker starts; the devices are
// faked: no GPU is needed.
TEST(DeviceList, GpusOfDifferentModelsAreRefused) {
  auto gpu = [](std::string name, int sms, int major, int sm_clock) {
    harness::DeviceInfo d;
    d.name = std::move(name);
    d.sm_count = sms;
    d.cc_major = major;
    d.sm_clock_khz = sm_clock;
    d.mem_clock_khz = 3'201'000;
    return d;
  };
  const std::vector<harness::DeviceInfo> same = {gpu("NVIDIA H200", 132, 9, 1'980'000),
                                                 gpu("NVIDIA H200", 132, 9, 1'980'000)};
  std::vector<int> asked;
  auto fake = [&](const std::vector<harness::DeviceInfo>& host) {
    return [&asked, &host](int d) {
      asked.push_back(d);
      return host.at(static_cast<std::size_t>(d));
    };
  };
  EXPECT_EQ(check_one_model(0, {0, 1}, fake(same)).name, "NVIDIA H200");
  EXPECT_EQ(asked, (std::vector<int>{0, 1}));
  const std::vector<harness::DeviceInfo> mixed = {gpu("NVIDIA H200", 132, 9, 1'980'000),
                                                  gpu("NVIDIA H100 80GB HBM3", 132, 9, 1'980'000),
                                                  gpu("NVIDIA H200", 132, 9, 1'755'000)};
  for (int other : {1, 2}) {
    try {
      check_one_model(0, {0, other}, fake(mixed));
      ADD_FAILURE() << "device " << other << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
      const std::string what = e.what();
      EXPECT_NE(what.find(fmt::format("device {} is", other)), std::string::npos) << what;
      EXPECT_NE(what.find("own `ktune tune --devices"), std::string::npos) << what;
    }
  }
  // Duplicates (workers sharing a GPU) ask each device once.
  asked.clear();
  check_one_model(1, {1, 1, 0, 0}, fake(same));
  EXPECT_EQ(asked, (std::vector<int>{1, 0}));
}

}  // namespace
}  // namespace ktune::tuner
