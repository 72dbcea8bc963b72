#pragma once
// Device profiles made by hand, for the host tests of profiles, the profile store and calibration by
// need: a test device and a whole, plausible profile of it (a PCIe GPU).

#include "ziggurat/base/device.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::test {

/// A transfer fit of `latency` and `bandwidth` with two samples on it.
inline TransferFit transfer_fit(double latency, double bandwidth) {
  TransferFit f;
  f.latency_s = latency;
  f.bytes_per_s = bandwidth;
  f.max_relative_error = 0.02;
  f.samples = {{4096, latency + 4096 / bandwidth, latency + 4000 / bandwidth},
               {1 << 20, latency + (1 << 20) / bandwidth, latency + (1 << 20) / bandwidth}};
  return f;
}

inline DeviceInfo test_device() {
  DeviceInfo d;
  d.name = "Test GPU";
  d.vendor = "Test Vendor";
  d.platform_name = "Test Platform";
  d.driver_version = "1.2.3";
  return d;
}

/// The device figures every command measures (transfers, launches, copy bandwidth, overlap),
/// with no kernel rate and no vector calls: what calibration by need leaves after one command
/// that needed no rate.
inline DeviceProfile device_figures_profile() {
  DeviceProfile p;
  p.library_version = version;
  p.platform = "Test Platform";
  p.device = "Test GPU";
  p.vendor = "Test Vendor";
  p.driver = "1.2.3";
  p.date = "2026-11-21T00:00:00Z";
  p.timer = "profiling events";
  p.calibration_s = 0.8;
  p.phases = {{"pinned transfers", 0.1}, {"stencil rates", 0.3}};
  p.upload_pinned = transfer_fit(8e-6, 50e9);
  p.download_pinned = transfer_fit(9e-6, 40e9);
  p.upload_pageable = transfer_fit(10e-6, 12e9);
  p.download_pageable = transfer_fit(11e-6, 14e9);
  p.upload_rect = transfer_fit(12e-6, 20e9);
  p.download_rect = transfer_fit(13e-6, 25e9);
  // Contiguous transfers: 1 ms each alone; with all three running the upload takes 1.05 ms.
  p.overlap = {1e-3, 1e-3, 1e-3, 1.1e-3, 1.05e-3, 1.05e-3, 1e-3, 1.1e-3, 0.95, 0.97};
  // Rect transfers: upload 1, download 1.2, kernels 2 ms; all three 3.6 ms: efficiency
  // (4.2 - 3.6) / 2.2 < 0.5, no overlap; up and down 1.5 ms: duplex efficiency 0.7.
  p.rect_overlap = {1e-3, 1.2e-3, 2e-3, 3.6e-3, 1.5e-3, 1.5e-3, 1.5e-3, 2e-3, 0.6 / 2.2, 0.7};
  p.launch_pipelined_s = 4e-6;
  p.launch_blocking_s = 10e-6;
  p.copy_kernel_bytes_per_s = 3e12;
  p.copy_driver_bytes_per_s = 4e12;
  return p;
}

/// A whole profile: the device figures, two heat rates and the vector calls.
inline DeviceProfile test_profile() {
  DeviceProfile p = device_figures_profile();
  p.kernels = {{"heat2d_box", 2, 4, {8192, 8192}, 0.004}, {"heat2d_box", 2, 8, {4096, 4096}, 0.005}};
  p.numstreams = 270336;
  p.axpy_wave_s = 2e-6;
  p.axpy_call_s = 5e-6;
  p.vector_calls_measured = true;
  return p;
}

}  // namespace ziggurat::test
