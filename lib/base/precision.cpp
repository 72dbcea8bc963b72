#include "ziggurat/base/precision.hpp"

#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat {

void require_fp64(const DeviceInfo& device, std::string_view what) {
  if (device.fp64) return;
  throw UnsupportedFeature(std::string(what) + " in double precision needs cl_khr_fp64, which " + device.label() +
                           " lacks: compute in float, or select a device with double precision (selection term "
                           "'fp64')");
}

}  // namespace ziggurat
