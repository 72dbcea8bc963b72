#include "ziggurat/tuning/device_profile.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tuning/json_fields.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

namespace ziggurat {

namespace {

using nlohmann::json;

// Bumped whenever the profile's fields or their meaning change: older files are re-measured.
constexpr int kProfileFormat = 4;

json fit_json(const TransferFit& fit) {
  json samples = json::array();
  for (const auto& s : fit.samples) samples.push_back({{"bytes", s.bytes}, {"median_s", s.median_s}, {"min_s", s.min_s}});
  return {{"latency_s", fit.latency_s}, {"bytes_per_s", fit.bytes_per_s},
          {"max_relative_error", fit.max_relative_error}, {"samples", samples}};
}

json overlap_json(const OverlapMeasurement& o) {
  return {{"upload_s", o.upload_s}, {"download_s", o.download_s}, {"compute_s", o.compute_s},
          {"all_three_s", o.all_three_s}, {"up_and_down_s", o.up_and_down_s},
          {"upload_together_s", o.upload_together_s}, {"download_together_s", o.download_together_s},
          {"compute_together_s", o.compute_together_s},
          {"efficiency", o.efficiency}, {"duplex_efficiency", o.duplex_efficiency}};
}

TransferFit fit_from(const detail::JsonFields& r) {
  TransferFit fit;
  fit.latency_s = r.number("latency_s");
  fit.bytes_per_s = r.number("bytes_per_s");
  fit.max_relative_error = r.number("max_relative_error");
  for (const auto& sample : r.array("samples")) {
    const auto s = r.element(sample, "sample");
    fit.samples.push_back({s.number("bytes"), s.number("median_s"), s.number("min_s")});
  }
  return fit;
}

OverlapMeasurement overlap_from(const detail::JsonFields& o) {
  OverlapMeasurement m;
  m.upload_s = o.number("upload_s");
  m.download_s = o.number("download_s");
  m.compute_s = o.number("compute_s");
  m.all_three_s = o.number("all_three_s");
  m.up_and_down_s = o.number("up_and_down_s");
  m.upload_together_s = o.number("upload_together_s");
  m.download_together_s = o.number("download_together_s");
  m.compute_together_s = o.number("compute_together_s");
  m.efficiency = o.number("efficiency");
  m.duplex_efficiency = o.number("duplex_efficiency");
  return m;
}

// Refuses, naming the field, a value that no measurement can produce. The bounds keep the cost
// models finite: a launch of 1e308 s passes "positive and finite" and plans no pyramid at all.
constexpr double kLongestSeconds = 3600;                 // no single measurement takes an hour
constexpr double kLeastBandwidth = 1e3, kMostBandwidth = 1e15;  // 1 kB/s to 1 PB/s
constexpr double kMostBytes = 1e15;
constexpr double kLeastNsPerNode = 1e-6, kMostNsPerNode = 1e6;
constexpr double kMostFitError = 1e3;
constexpr std::size_t kMostNumstreams = std::size_t(1) << 40;

class Plausibility {
 public:
  explicit Plausibility(std::string where) : where_(std::move(where)) {}

  void time(const char* key, double value) const { number(key, value, false, 0, kLongestSeconds, " s"); }     // >= 0
  void duration(const char* key, double value) const { number(key, value, true, 0, kLongestSeconds, " s"); }  // > 0
  void bandwidth(const char* key, double value) const {
    number(key, value, true, kLeastBandwidth, kMostBandwidth, " bytes/s");
  }
  void optional_bandwidth(const char* key, double value) const {  // 0: not measured (no timers)
    if (value != 0) bandwidth(key, value);
  }
  void bytes(const char* key, double value) const { number(key, value, true, 0, kMostBytes, " bytes"); }
  void ns_per_node(const char* key, double value) const {
    number(key, value, true, kLeastNsPerNode, kMostNsPerNode, " ns");
  }
  void fit_error(const char* key, double value) const { number(key, value, false, 0, kMostFitError, ""); }
  void fraction(const char* key, double value) const {
    if (value > 1) fail(std::string("'") + key + "' is above 1");
    number(key, value, false, 0, 1, "");
  }
  void count(const char* key, std::size_t value, std::size_t least, std::size_t most) const {
    if (value < least || value > most) {
      fail(std::string("'") + key + "' = " + std::to_string(value) + " is not a whole number from " +
           std::to_string(least) + " to " + std::to_string(most));
    }
  }
  void text(const char* key, const std::string& value) const {
    if (value.empty()) fail(std::string("'") + key + "' is empty");
  }
  Plausibility inside(const std::string& part) const { return Plausibility(where_ + part); }
  [[noreturn]] void fail(const std::string& problem) const {
    throw InvalidArgument("device profile" + (where_.empty() ? "" : " " + where_) + ": " + problem);
  }

 private:
  // Finite, within [least, most], and above 0 when `positive`.
  void number(const char* key, double value, bool positive, double least, double most, const char* unit) const {
    if (!std::isfinite(value) || value < least || value > most || (positive && value == 0)) {
      fail(std::string("'") + key + "' = " + json(value).dump() + " is not a possible measurement (" +
           (positive && least == 0 ? "above 0" : "from " + json(least).dump()) + " to " + json(most).dump() + unit +
           ")");
    }
  }
  std::string where_;
};

void validate_fit(const Plausibility& p, const TransferFit& fit) {
  p.time("latency_s", fit.latency_s);
  p.bandwidth("bytes_per_s", fit.bytes_per_s);
  p.fit_error("max_relative_error", fit.max_relative_error);
  if (fit.samples.size() < 2) p.fail("a transfer fit needs at least two samples");
  const Plausibility sample = p.inside(" sample");
  for (const auto& s : fit.samples) {
    sample.bytes("bytes", s.bytes);
    sample.duration("median_s", s.median_s);
    sample.duration("min_s", s.min_s);
  }
}

void validate_overlap(const Plausibility& p, const OverlapMeasurement& o) {
  for (const auto& [key, value] : {std::pair{"upload_s", o.upload_s}, {"download_s", o.download_s},
                                   {"compute_s", o.compute_s}, {"all_three_s", o.all_three_s},
                                   {"up_and_down_s", o.up_and_down_s}, {"upload_together_s", o.upload_together_s},
                                   {"download_together_s", o.download_together_s},
                                   {"compute_together_s", o.compute_together_s}}) {
    p.duration(key, value);
  }
  p.fraction("efficiency", o.efficiency);
  p.fraction("duplex_efficiency", o.duplex_efficiency);
}

void validate_kernel(const Plausibility& kernel, const KernelRate& k) {
  kernel.text("kernel", k.kernel);
  kernel.count("dims", k.dims, 1, 3);
  if (k.value_bytes != 4 && k.value_bytes != 8) {
    kernel.fail("'value_bytes' = " + std::to_string(k.value_bytes) + " is neither 4 (float) nor 8 (double)");
  }
  kernel.ns_per_node("ns_per_node", k.ns_per_node);
}

}  // namespace

RateNeed RateNeed::heat(std::size_t dims, std::size_t value_bytes) {
  return {"heat" + std::to_string(dims) + "d_box", dims, value_bytes};
}

RateNeed RateNeed::jacobi(std::size_t value_bytes) { return {kJacobiKernel, 3, value_bytes}; }

std::string RateNeed::label() const { return kernel + (value_bytes == 4 ? " f32" : " f64"); }

ProfileNeeds ProfileNeeds::everything() {
  ProfileNeeds all;
  // 2D float first: the most used. Double after float: its programs build longest.
  for (const std::size_t bytes : {4, 8}) {
    for (const std::size_t dims : {2, 1, 3}) all.rates.push_back(RateNeed::heat(dims, bytes));
  }
  for (const std::size_t bytes : {4, 8}) all.rates.push_back(RateNeed::jacobi(bytes));
  all.vector_calls = true;
  return all;
}

ProfileNeeds ProfileNeeds::heat(std::size_t dims, std::size_t value_bytes) {
  return {{RateNeed::heat(dims, value_bytes)}, false};
}

ProfileNeeds ProfileNeeds::jacobi(std::size_t value_bytes) { return {{RateNeed::jacobi(value_bytes)}, false}; }

ProfileNeeds ProfileNeeds::long_vector() { return {{}, true}; }

bool DeviceProfile::has(const RateNeed& rate) const {
  return (rate.kernel == kJacobiKernel ? jacobi_tau_a_ns(rate.value_bytes) : tau_a_ns(rate.dims, rate.value_bytes))
      .has_value();
}

ProfileNeeds missing_from(const DeviceProfile& profile, const ProfileNeeds& needs) {
  ProfileNeeds missing;
  for (const RateNeed& rate : needs.rates) {
    if (!profile.has(rate)) missing.rates.push_back(rate);
  }
  missing.vector_calls = needs.vector_calls && !profile.vector_calls_measured;
  return missing;
}

double DeviceProfile::copy_bytes_per_s() const { return std::max(copy_kernel_bytes_per_s, copy_driver_bytes_per_s); }

std::optional<double> DeviceProfile::tau_a_ns(std::size_t dims, std::size_t value_bytes) const {
  for (const KernelRate& k : kernels) {
    if (k.dims == dims && k.value_bytes == value_bytes && k.kernel != kJacobiKernel) return k.ns_per_node;
  }
  return std::nullopt;
}

std::optional<double> DeviceProfile::jacobi_tau_a_ns(std::size_t value_bytes) const {
  for (const KernelRate& k : kernels) {
    if (k.kernel == kJacobiKernel && k.value_bytes == value_bytes) return k.ns_per_node;
  }
  return std::nullopt;
}

void validate(const DeviceProfile& profile) {
  const Plausibility p("");
  for (const auto& [key, value] : {std::pair{"library_version", &profile.library_version}, {"platform", &profile.platform},
                                   {"device", &profile.device}, {"date", &profile.date}, {"timer", &profile.timer}}) {
    p.text(key, *value);
  }
  p.duration("calibration_s", profile.calibration_s);
  for (const auto& phase : profile.phases) p.inside(" phase '" + phase.name + "'").time("seconds", phase.seconds);
  for (const auto& [key, fit] : {std::pair{"upload_pinned", &profile.upload_pinned}, {"download_pinned", &profile.download_pinned},
                                 {"upload_pageable", &profile.upload_pageable}, {"download_pageable", &profile.download_pageable},
                                 {"upload_rect", &profile.upload_rect}, {"download_rect", &profile.download_rect}}) {
    validate_fit(p.inside(std::string(".") + key), *fit);
  }
  validate_overlap(p.inside(".overlap"), profile.overlap);
  validate_overlap(p.inside(".rect_overlap"), profile.rect_overlap);
  p.duration("launch_pipelined_s", profile.launch_pipelined_s);
  p.duration("launch_blocking_s", profile.launch_blocking_s);
  p.optional_bandwidth("copy_kernel_bytes_per_s", profile.copy_kernel_bytes_per_s);
  p.optional_bandwidth("copy_driver_bytes_per_s", profile.copy_driver_bytes_per_s);
  const Plausibility kernel = p.inside("kernel");
  for (auto k = profile.kernels.begin(); k != profile.kernels.end(); ++k) {
    const auto same = [&](const KernelRate& other) {
      return other.kernel == k->kernel && other.dims == k->dims && other.value_bytes == k->value_bytes;
    };
    if (std::any_of(profile.kernels.begin(), k, same)) {
      kernel.fail("'" + k->kernel + "' in " + std::to_string(k->value_bytes) + "-byte values is given twice");
    }
    validate_kernel(kernel, *k);
  }
  if (!profile.vector_calls_measured && (profile.numstreams != 0 || profile.axpy_wave_s != 0 || profile.axpy_call_s != 0)) {
    p.fail("holds vector-call constants (numstreams, axpy_wave_s, axpy_call_s) but 'vector_calls_measured' is false");
  }
  p.count("numstreams", profile.numstreams, 0, kMostNumstreams);

  p.time("axpy_wave_s", profile.axpy_wave_s);
  p.time("axpy_call_s", profile.axpy_call_s);
}

std::string profile_to_json(const DeviceProfile& p) {
  json phases = json::array();
  for (const auto& phase : p.phases) phases.push_back({{"name", phase.name}, {"seconds", phase.seconds}});
  json kernels = json::array();
  for (const auto& k : p.kernels) {
    kernels.push_back({{"kernel", k.kernel}, {"dims", k.dims}, {"value_bytes", k.value_bytes},
                       {"extents", k.extents}, {"ns_per_node", k.ns_per_node}});
  }
  const json j = {
      {"format", kProfileFormat},
      {"library_version", p.library_version},
      {"platform", p.platform},
      {"device", p.device},
      {"vendor", p.vendor},
      {"driver", p.driver},
      {"date", p.date},
      {"timer", p.timer},
      {"host_unified_memory", p.host_unified_memory},
      {"calibration_s", p.calibration_s},
      {"phases", phases},
      {"upload_pinned", fit_json(p.upload_pinned)},
      {"download_pinned", fit_json(p.download_pinned)},
      {"upload_pageable", fit_json(p.upload_pageable)},
      {"download_pageable", fit_json(p.download_pageable)},
      {"upload_rect", fit_json(p.upload_rect)},
      {"download_rect", fit_json(p.download_rect)},
      {"overlap", overlap_json(p.overlap)},
      {"rect_overlap", overlap_json(p.rect_overlap)},
      {"launch_pipelined_s", p.launch_pipelined_s},
      {"launch_blocking_s", p.launch_blocking_s},
      {"copy_kernel_bytes_per_s", p.copy_kernel_bytes_per_s},
      {"copy_driver_bytes_per_s", p.copy_driver_bytes_per_s},
      {"kernels", kernels},
      {"numstreams", p.numstreams},
      {"axpy_wave_s", p.axpy_wave_s},
      {"axpy_call_s", p.axpy_call_s},
      {"vector_calls_measured", p.vector_calls_measured},
  };
  return j.dump(2) + "\n";
}

DeviceProfile profile_from_json(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw IoError("device profile: not valid JSON");
  const detail::JsonFields r(j, "device profile");
  if (!j.contains("format") || j["format"] != kProfileFormat) {
    r.fail("format " + (j.contains("format") ? j["format"].dump() : std::string("(none)")) + " is not this library's (" +
           std::to_string(kProfileFormat) + ")");
  }
  DeviceProfile p;
  p.library_version = r.text("library_version");
  p.platform = r.text("platform");
  p.device = r.text("device");
  p.vendor = r.text("vendor");
  p.driver = r.text("driver");
  p.date = r.text("date");
  p.timer = r.text("timer");
  p.host_unified_memory = r.flag("host_unified_memory");
  p.calibration_s = r.number("calibration_s");
  for (const auto& phase : r.array("phases")) {
    const auto f = r.element(phase, "phase");
    p.phases.push_back({f.text("name"), f.number("seconds")});
  }
  p.upload_pinned = fit_from(r.object("upload_pinned"));
  p.download_pinned = fit_from(r.object("download_pinned"));
  p.upload_pageable = fit_from(r.object("upload_pageable"));
  p.download_pageable = fit_from(r.object("download_pageable"));
  p.upload_rect = fit_from(r.object("upload_rect"));
  p.download_rect = fit_from(r.object("download_rect"));
  p.overlap = overlap_from(r.object("overlap"));
  p.rect_overlap = overlap_from(r.object("rect_overlap"));
  p.launch_pipelined_s = r.number("launch_pipelined_s");
  p.launch_blocking_s = r.number("launch_blocking_s");
  p.copy_kernel_bytes_per_s = r.number("copy_kernel_bytes_per_s");
  p.copy_driver_bytes_per_s = r.number("copy_driver_bytes_per_s");
  for (const auto& kernel : r.array("kernels")) {
    const auto k = r.element(kernel, "kernel");
    KernelRate rate;
    rate.kernel = k.text("kernel");
    rate.dims = k.count("dims");
    rate.value_bytes = k.count("value_bytes");
    for (const auto& extent : k.array("extents")) {
      if (!extent.is_number_unsigned()) k.fail("'extents' holds something other than node counts");
      rate.extents.push_back(extent.get<std::size_t>());
    }
    rate.ns_per_node = k.number("ns_per_node");
    p.kernels.push_back(std::move(rate));
  }
  p.numstreams = r.count("numstreams");
  p.axpy_wave_s = r.number("axpy_wave_s");
  p.axpy_call_s = r.number("axpy_call_s");
  // Written before calibration by need: a full calibration, CLBlast's constants included.
  p.vector_calls_measured = j.contains("vector_calls_measured") ? r.flag("vector_calls_measured") : true;
  try {
    validate(p);
  } catch (const InvalidArgument& implausible) {
    throw IoError(implausible.what());
  }
  return p;
}

DeviceProfile read_profile_file(const std::filesystem::path& path) {
  const auto bytes = read_file(path);
  try {
    return profile_from_json(std::string(bytes.begin(), bytes.end()));
  } catch (const IoError& error) {
    throw IoError("'" + path.string() + "' is not a usable device profile (" + error.what() +
                  "): measure the device again (calibrate()) and save that profile");
  }
}

}  // namespace ziggurat
