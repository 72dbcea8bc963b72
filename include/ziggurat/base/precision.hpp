#pragma once
// The element types ziggurat computes in (float and double), and the one check that a device can
// compute in double precision.

#include <string_view>
#include <type_traits>

#include "ziggurat/base/device.hpp"

namespace ziggurat {

/// "float" or "double", for messages.
template <class T>
constexpr const char* type_name() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double");
  return std::is_same_v<T, float> ? "float" : "double";
}

/// Throws UnsupportedFeature, saying that `what` needs it, unless `device` has double precision
/// (cl_khr_fp64).
void require_fp64(const DeviceInfo& device, std::string_view what);

/// require_fp64 for double; nothing to check for float.
template <class T>
void require_precision(const DeviceInfo& device, std::string_view what) {
  if constexpr (std::is_same_v<T, double>) require_fp64(device, what);
}

}  // namespace ziggurat
