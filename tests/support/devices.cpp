#include "devices.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace ziggurat::test {

namespace {

std::string current_test_case;
std::set<std::pair<std::string, std::size_t>> ran_cases, skipped_cases;

// Tells the device runner which test case is running, so that it counts cases, not subcases.
struct CurrentTestListener : doctest::IReporter {
  explicit CurrentTestListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override { current_test_case = data.m_name; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

REGISTER_LISTENER("current-test", 1, CurrentTestListener);

std::vector<DeviceUnderTest>& devices_under_test() {
  static std::vector<DeviceUnderTest> devices = [] {
    std::vector<DeviceUnderTest> list;
    for (const auto& info : devices_from_environment()) list.push_back({info, std::make_unique<Context>(info)});
    return list;
  }();
  return devices;
}

void for_each_device(const std::function<void(Context&)>& body, Needs needs) {
  auto& devices = devices_under_test();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& info = devices[i].info;
    const std::string name = "device #" + std::to_string(info.index) + " " + info.label();
    SUBCASE(name.c_str()) {
      if (needs == Needs::fp64 && !info.fp64) {
        skipped_cases.insert({current_test_case, i});
        MESSAGE("skipped on " << name << ": no double precision (cl_khr_fp64)");
      } else {
        ran_cases.insert({current_test_case, i});
        body(*devices[i].context);
      }
    }
  }
}

std::vector<DeviceRecord> device_records() {
  std::vector<DeviceRecord> records(devices_under_test().size());
  for (const auto& [name, device] : ran_cases) ++records[device].ran;
  for (const auto& [name, device] : skipped_cases) ++records[device].skipped;
  return records;
}

}  // namespace ziggurat::test
