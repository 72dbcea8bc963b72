#pragma once
// A device profile with plausible, fixed constants (a PCIe GPU), for tests whose subject is the
// plans it leads to, not the device's speed: measuring a profile in every test would take long.

#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::test {

inline DeviceProfile fixed_profile() {
  DeviceProfile p;
  for (TransferFit* fit : {&p.upload_pinned, &p.download_pinned, &p.upload_pageable, &p.download_pageable,
                           &p.upload_rect, &p.download_rect}) {
    fit->latency_s = 10e-6;
    fit->bytes_per_s = 20e9;
  }
  p.launch_pipelined_s = 5e-6;
  p.overlap.efficiency = p.overlap.duplex_efficiency = 1;
  p.rect_overlap = p.overlap;
  for (const std::size_t bytes : {4, 8}) {
    for (const std::size_t dims : {1, 2, 3}) p.kernels.push_back({"fixed", dims, bytes, {}, 0.01 * static_cast<double>(bytes)});
    p.kernels.push_back({kJacobiKernel, 3, bytes, {}, 0.01 * static_cast<double>(bytes)});
  }
  return p;
}

}  // namespace ziggurat::test
