// The device tests' main: runs doctest, then reports per device how many test cases ran and were
// skipped, and FAILS a run in which no device was found or some device ran no test case at all
// (a green run that tested nothing would be a lie).

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "devices.hpp"
#include "ziggurat/base/error.hpp"

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);

  std::size_t device_count = 0;
  try {
    device_count = ziggurat::test::devices_under_test().size();
  } catch (const ziggurat::Error& error) {
    std::cerr << "FAILED: cannot set up the devices under test: " << error.what() << "\n";
    return 1;
  }
  const int result = context.run();
  if (context.shouldExit()) return result;

  if (device_count == 0) {
    std::cerr << "FAILED: no OpenCL device found"
              << (std::getenv("ZIGGURAT_DEVICE") ? " that matches ZIGGURAT_DEVICE" : "")
              << "; device tests need at least one (scripts/setup.sh installs PoCL)\n";
    return 1;
  }
  bool every_device_tested = true;
  const auto records = ziggurat::test::device_records();
  std::cout << "\nDevice test cases per device:\n";
  for (std::size_t i = 0; i < device_count; ++i) {
    const auto& info = ziggurat::test::devices_under_test()[i].info;
    std::cout << "  #" << info.index << " " << info.label() << ": " << records[i].ran << " ran, "
              << records[i].skipped << " skipped\n";
    every_device_tested = every_device_tested && records[i].ran > 0;
  }
  // Release the contexts before static destruction: some runtimes (Oclgrind) are gone by then.
  ziggurat::test::devices_under_test().clear();
  if (!every_device_tested) {
    std::cerr << "FAILED: a device ran no test case (all skipped or filtered out)\n";
    return 1;
  }
  return result;
}
