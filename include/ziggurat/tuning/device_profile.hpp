#pragma once
// What calibration (tuning/calibration.hpp) measures on a device, as one record with the identity
// it belongs to: transfers, overlap, launches, memory bandwidth, stencil compute rates, and the
// length from which vector calls saturate the device. A profile may be partial: the device figures
// (transfers, launches, copy bandwidth, overlap) are always there, the kernel families' rates only
// once a command that plans with them has needed them (ProfileNeeds). The cost models' constants are derived from
// it where the models live (tuning/model_constants.hpp); kernel autotuning results are records of
// their own (tuning/profile_store.hpp).

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ziggurat {

/// One measured point: median and minimum of the repeated timings.
struct TimingSample {
  double bytes = 0;  ///< the size measured (bytes moved)
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
};

/// The name of the Poisson solver's seven-point Jacobi sweep among the measured kernels.
inline constexpr const char* kJacobiKernel = "jacobi3d_box";

/// The compute time per node and step (tau_a) of one stencil kernel in the steady state.
struct KernelRate {
  std::string kernel;  ///< e.g. "heat2d_box"
  std::size_t dims = 0;
  std::size_t value_bytes = 0;
  std::vector<std::size_t> extents;  ///< the grid it was measured on
  double ns_per_node = 0;
};

/// A stencil kernel's rate that a command plans with: the heat stencil of `dims` dimensions, or the
/// Jacobi sweep (kJacobiKernel, 3D), in 4- or 8-byte values.
struct RateNeed {
  std::string kernel;
  std::size_t dims = 0;
  std::size_t value_bytes = 0;
  static RateNeed heat(std::size_t dims, std::size_t value_bytes);
  static RateNeed jacobi(std::size_t value_bytes);
  /// e.g. "heat2d_box f32": the name of its calibration phase.
  std::string label() const;
};

/// What a command's models read of a profile beyond the device figures, which every profile holds:
/// the rates of the kernel families it runs, and CLBlast's vector-call constants.
struct ProfileNeeds {
  std::vector<RateNeed> rates;
  bool vector_calls = false;  ///< CLBlast xAXPY's constants (the long-vector model)
  /// Every rate in both precisions and the vector calls: what `ziggurat calibrate` measures.
  static ProfileNeeds everything();
  static ProfileNeeds heat(std::size_t dims, std::size_t value_bytes);  ///< the heat pyramid
  static ProfileNeeds jacobi(std::size_t value_bytes);                  ///< the Poisson solver
  static ProfileNeeds long_vector();                                    ///< CLBlast's heat steps
  bool empty() const { return rates.empty() && !vector_calls; }
};

/// How long one part of a calibration took, waiting for the program builds it needs included.
struct CalibrationPhase {
  std::string name;
  double seconds = 0;
};

/// Everything calibrate() measures, with the identity it belongs to.
struct DeviceProfile {
  // Identity: a cached profile is used only when all of these match the device and library.
  std::string library_version, platform, device, vendor, driver;
  std::string date;   ///< when it was measured, ISO 8601
  std::string timer;  ///< "profiling events" or "host clock"
  bool host_unified_memory = false;  ///< transfers are copies within host memory (zero-copy device)
  double calibration_s = 0;          ///< how long the measurement took
  std::vector<CalibrationPhase> phases;  ///< where that time went

  TransferFit upload_pinned, download_pinned;      ///< contiguous, page-locked host memory
  TransferFit upload_pageable, download_pageable;  ///< contiguous, ordinary host memory
  TransferFit upload_rect, download_rect;          ///< square regions of a pinned 2D host array
  OverlapMeasurement overlap;       ///< with contiguous transfers (strips)
  OverlapMeasurement rect_overlap;  ///< with rectangular-region transfers (blocks)
  double launch_pipelined_s = 0;  ///< per kernel, many launched back to back
  double launch_blocking_s = 0;   ///< one launch and a wait for it
  double copy_kernel_bytes_per_s = 0;  ///< read + write bytes per second, simple copy kernel (0: no timers)
  double copy_driver_bytes_per_s = 0;  ///< the same with clEnqueueCopyBuffer (0: no timers)
  std::vector<KernelRate> kernels;
  /// The vector length at which the device saturates: CLBlast xAXPY takes twice its floor time
  /// there (the elements cost as much as the call), and beyond it grows one wave per numstreams
  /// elements (the long-vector model's staircase). 0 when CLBlast could not run.
  std::size_t numstreams = 0;
  double axpy_wave_s = 0;  ///< CLBlast xAXPY: time per wave of numstreams elements
  double axpy_call_s = 0;  ///< CLBlast xAXPY: cost of one call in a stream of calls
  /// Whether the three above were measured (numstreams 0 then means CLBlast could not run). A
  /// profile written before calibration by need holds everything, so a file without the field
  /// reads as measured.
  bool vector_calls_measured = false;

  double copy_bytes_per_s() const;
  /// tau_a measured for the heat stencil kernel of `dims` dimensions and `value_bytes`-byte
  /// values, if one was.
  std::optional<double> tau_a_ns(std::size_t dims, std::size_t value_bytes) const;
  /// tau_a measured for the Jacobi sweep (kJacobiKernel) of `value_bytes`-byte values, if one was.
  std::optional<double> jacobi_tau_a_ns(std::size_t value_bytes) const;
  bool has(const RateNeed& rate) const;
};

/// What of `needs` the profile does not hold yet.
ProfileNeeds missing_from(const DeviceProfile& profile, const ProfileNeeds& needs);

/// Throws InvalidArgument naming the first value no measurement can produce: a missing identity,
/// a time that is negative, not finite or longer than an hour (no single measurement of a
/// calibration takes that long), a rate or duration that is not positive, a bandwidth outside 1 kB/s
/// to 1 PB/s, a transfer size above 1 PB, a kernel rate outside 1e-6 to 1e6 ns a node, an
/// efficiency outside [0, 1], a fit error above 1000, numstreams above 2^40, a transfer fit of
/// fewer than two samples, a kernel of other than 1 to 3 dimensions or 4 or 8 bytes a value, a
/// kernel rate given twice, vector-call constants where none were measured. Values within these
/// bounds give the cost models finite plans. A profile of no kernel rate is valid: the rates are
/// measured when a command needs them.
void validate(const DeviceProfile& profile);

/// The profile as JSON, and back. profile_from_json throws IoError for text that is not a
/// complete profile of this library's format, or whose values validate() refuses.
std::string profile_to_json(const DeviceProfile& profile);
DeviceProfile profile_from_json(const std::string& text);

/// A profile saved as JSON (profile_to_json). Throws IoError naming the file when it cannot be
/// read or is not a usable profile.
DeviceProfile read_profile_file(const std::filesystem::path& path);

}  // namespace ziggurat
