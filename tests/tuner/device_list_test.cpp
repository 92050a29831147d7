// `ktune tune --devices`: the list of GPUs whose workers measure in parallel.
#include "tuner/device_list.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ktune::tuner
