#pragma once
// Runs device test cases on every OpenCL device of this run (all devices, or those that
// ZIGGURAT_DEVICE selects), each device in its own doctest SUBCASE named after it, and keeps the
// record that device_main.cpp uses to fail a run that tested nothing.

#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/device.hpp"

namespace ziggurat::test {

struct DeviceUnderTest {
  DeviceInfo info;
  std::unique_ptr<Context> context;  // shared by every test case on this device
};

/// The devices of this run, each with its Context, created on first use.
std::vector<DeviceUnderTest>& devices_under_test();

enum class Needs { nothing, fp64 };

/// Runs `body` on every device under test; a device without what `needs` asks for is skipped
/// (and counted as skipped) with a message naming it.
void for_each_device(const std::function<void(Context&)>& body, Needs needs = Needs::nothing);

/// Needs::fp64 for double, nothing for float.
template <class T>
constexpr Needs needs_for() {
  return std::is_same_v<T, double> ? Needs::fp64 : Needs::nothing;
}

/// Test cases run and skipped per device (by index into devices_under_test()).
struct DeviceRecord {
  std::size_t ran = 0;
  std::size_t skipped = 0;
};
std::vector<DeviceRecord> device_records();

}  // namespace ziggurat::test
