#pragma once
// Measuring a device: transfers, overlap, launches, memory bandwidth, stencil compute rates and
// the number of work-items that run at once, condensed into the constants the cost models take
// (model.hpp), and kept on disk so that a program pays for the measurement once per device,
// driver and library version.
//
// Every timing is taken after a warm-up, repeated, and kept as median and minimum; device work
// is timed with OpenCL profiling events where the device has them, else with the host clock.
// Transfers are fitted as t(bytes) = latency + bytes / bandwidth over a sweep of sizes.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/context.hpp"
#include "ziggurat/model.hpp"

namespace ziggurat {

/// One measured point: median and minimum of the repeated timings.
struct TimingSample {
  double bytes = 0;  ///< the size measured (bytes moved, or work-items for kernels)
  double median_s = 0;
  double min_s = 0;
};

/// t(bytes) = latency + bytes / bandwidth, fitted to the medians: the bandwidth over the transfers
/// of 1 MiB and more (the pyramid's tasks move megabytes), the latency as the median time the
/// smaller ones take beyond that bandwidth.
struct TransferFit {
  double latency_s = 0;
  double bytes_per_s = 0;
  double max_relative_error = 0;  ///< largest |fit - median| / median over the samples of >= 1 MiB
  std::vector<TimingSample> samples;
  double seconds(double bytes) const { return latency_s + bytes / bytes_per_s; }
};

/// Whether uploads, downloads and kernels issued on the three queues run at the same time.
struct OverlapMeasurement {
  double upload_s = 0, download_s = 0, compute_s = 0;  ///< each alone
  double all_three_s = 0;                              ///< all three issued together
  double up_and_down_s = 0;                            ///< upload and download issued together
  /// The upload's, the download's and the kernels' own time while all three run (device
  /// timers; else their times alone).
  double upload_together_s = 0, download_together_s = 0, compute_together_s = 0;
  /// (sum - together) / (sum - longest): 1 when they overlap perfectly, 0 when not at all.
  double efficiency = 0;
  double duplex_efficiency = 0;
  bool transfers_overlap_compute() const { return efficiency >= 0.5; }
  bool duplex() const { return duplex_efficiency >= 0.5; }
  /// The model's view of these engines: each transfer slows down by its time with all three
  /// running over its time alone.
  model::TransferEngines engines() const;
};

/// The compute time per node and step (tau_a) of one stencil kernel in the steady state.
struct KernelRate {
  std::string kernel;  ///< e.g. "heat2d_step"
  std::size_t dims = 0;
  std::size_t value_bytes = 0;
  std::vector<std::size_t> extents;  ///< the grid it was measured on
  double ns_per_node = 0;
};

/// Kernel variants timed on one kind of problem, which automatic kernel choices read (e.g.
/// spmm.hpp's block CSR strategies). calibrate() leaves these empty; they are added as problems
/// are met, so each is measured once per device, driver and library version.
struct VariantTimings {
  std::string key;  ///< the kind of problem, e.g. "bsr f32 b4 k8 len3 even size8"
  std::vector<std::pair<std::string, double>> seconds;  ///< per variant, fastest first
};

/// Everything calibrate() measures, with the identity it belongs to.
struct DeviceProfile {
  // Identity: a cached profile is used only when all of these match the device and library.
  std::string library_version, platform, device, vendor, driver;
  std::string date;   ///< when it was measured, ISO 8601
  std::string timer;  ///< "profiling events" or "host clock"
  bool host_unified_memory = false;  ///< transfers are copies within host memory (zero-copy device)
  double calibration_s = 0;          ///< how long the measurement took

  TransferFit upload_pinned, download_pinned;      ///< contiguous, page-locked host memory
  TransferFit upload_pageable, download_pageable;  ///< contiguous, ordinary host memory
  TransferFit upload_rect, download_rect;          ///< square regions of a pinned 2D host array
  OverlapMeasurement overlap;       ///< with contiguous transfers (strips)
  OverlapMeasurement rect_overlap;  ///< with rectangular-region transfers (blocks)
  double launch_pipelined_s = 0;  ///< per kernel, many launched back to back
  double launch_blocking_s = 0;   ///< one launch and a wait for it
  double copy_kernel_bytes_per_s = 0;  ///< read + write bytes per second, simple copy kernel
  double copy_driver_bytes_per_s = 0;  ///< the same with clEnqueueCopyBuffer
  std::vector<KernelRate> kernels;
  /// The vector length at which the device saturates: CLBlast xAXPY takes twice its floor time
  /// there (the elements cost as much as the call), and beyond it grows one wave per numstreams
  /// elements (the long-vector model's staircase).
  std::size_t numstreams = 0;
  double axpy_wave_s = 0;  ///< CLBlast xAXPY: time per wave of numstreams elements
  double axpy_call_s = 0;  ///< CLBlast xAXPY: cost of one call in a stream of calls
  std::vector<VariantTimings> variant_timings;

  double copy_bytes_per_s() const;
  /// The model constants for a grid of `dims` dimensions and `value_bytes`-byte values: pinned
  /// transfers (pageable ones when `pinned_host` is false), rect transfers for blocks, tau_a of
  /// the matching stencil kernel (or `tau_a_ns` when given), pipelined launch cost, measured
  /// overlap. Throws UnsupportedFeature when tau_a is not given and no kernel of that kind was
  /// measured.
  model::DeviceConstants constants(std::size_t dims, std::size_t value_bytes,
                                   std::optional<double> tau_a_ns = std::nullopt, bool pinned_host = true) const;
  /// The long-vector model's constants (method notes, eq. 1) for a grid of `values` values.
  model::LongVectorConstants long_vector_constants(std::size_t value_bytes, double values) const;
};

/// Measures the device of `context` now (at most about a second on a GPU).
DeviceProfile calibrate(const Context& context);

/// The profile as JSON, and back. from_json throws IoError for text that is not a complete,
/// plausible profile (missing or non-finite fields, negative times).
std::string profile_to_json(const DeviceProfile& profile);
DeviceProfile profile_from_json(const std::string& text);

/// A profile saved by `ziggurat calibrate --json` (or profile_to_json). Throws IoError naming the
/// file when it cannot be read or is not a usable profile.
DeviceProfile read_profile_file(const std::filesystem::path& path);

/// Where a profile came from.
struct ProfileOrigin {
  bool from_cache = false;
  std::filesystem::path path;  ///< the cache file, if caching is on
  std::string remeasured_because;  ///< why a cached profile was not used, if one was there
  std::string cache_write_error;   ///< why a new measurement could not be cached, if it could not
};

/// The cached profile of the context's device when there is a valid one for this device, driver
/// and library version, else a fresh measurement, which is then cached (atomically). A corrupt or
/// stale file is measured again, never trusted. `force` measures regardless.
DeviceProfile load_or_calibrate(const Context& context, bool force = false, ProfileOrigin* origin = nullptr);

/// The cache file for a device's profile (in the cache root's profiles/ folder), if caching is on.
std::filesystem::path profile_path(const DeviceInfo& device);

/// The cached profile of `device` when the cache holds a complete one measured on this device,
/// driver and library version; otherwise nothing, and `why_not` (if given) says why: empty when
/// there is simply no cached profile, else what was wrong with the file.
std::optional<DeviceProfile> load_cached_profile(const DeviceInfo& device, std::string* why_not = nullptr);

/// Caches `profile` as the profile of `device`, atomically. Returns why it could not, or "".
std::string store_profile(const DeviceInfo& device, const DeviceProfile& profile);

/// The copy bandwidth of the device in read + write bytes per second, over buffers of `bytes`:
/// {copy kernel, clEnqueueCopyBuffer}, each the best of `repeat` rounds. Needs profiling.
std::pair<double, double> measure_copy_bandwidth(const Context& context, std::size_t bytes, std::size_t repeat);

}  // namespace ziggurat
