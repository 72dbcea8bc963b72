// Device profiles as JSON, and their on-disk cache.

#include <cmath>
#include <nlohmann/json.hpp>

#include "file_io.hpp"
#include "hash.hpp"
#include "ziggurat/binary_cache.hpp"
#include "ziggurat/calibration.hpp"
#include "ziggurat/error.hpp"
#include "ziggurat/version.hpp"

namespace ziggurat {

namespace {

using nlohmann::json;

// Bumped whenever the profile's fields or their meaning change: older files are re-measured.
constexpr int kProfileFormat = 3;

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

// Reads a profile field, refusing what a measurement cannot produce.
class Reader {
 public:
  explicit Reader(const json& object, std::string where) : object_(object), where_(std::move(where)) {
    if (!object_.is_object()) fail("is not an object");
  }

  double time(const char* key) const { return number(key, 0, false); }        // >= 0
  std::size_t count(const char* key, std::size_t least, std::size_t most) const {
    const json& value = field(key);
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() < least || value.get<std::uint64_t>() > most) {
      fail(std::string("'") + key + "' = " + value.dump() + " is not a whole number from " + std::to_string(least) +
           " to " + std::to_string(most));
    }
    return static_cast<std::size_t>(value.get<std::uint64_t>());
  }
  double rate(const char* key) const { return number(key, 0, true); }         // > 0
  double fraction(const char* key) const {
    const double value = number(key, 0, false);
    if (value > 1) fail(std::string("'") + key + "' is above 1");
    return value;
  }
  std::string text(const char* key) const {
    const json& value = field(key);
    if (!value.is_string()) fail(std::string("'") + key + "' is not a string");
    return value.get<std::string>();
  }
  bool flag(const char* key) const {
    const json& value = field(key);
    if (!value.is_boolean()) fail(std::string("'") + key + "' is not true or false");
    return value.get<bool>();
  }
  const json& array(const char* key) const {
    const json& value = field(key);
    if (!value.is_array()) fail(std::string("'") + key + "' is not a list");
    return value;
  }
  Reader object(const char* key) const { return Reader(field(key), where_ + "." + key); }
  [[noreturn]] void fail(const std::string& problem) const {
    throw IoError("device profile" + (where_.empty() ? "" : " " + where_) + ": " + problem);
  }

 private:
  const json& field(const char* key) const {
    const auto found = object_.find(key);
    if (found == object_.end()) fail(std::string("'") + key + "' is missing");
    return *found;
  }
  double number(const char* key, double floor, bool strictly) const {
    const json& value = field(key);
    if (!value.is_number()) fail(std::string("'") + key + "' is not a number");
    const double x = value.get<double>();
    if (!std::isfinite(x) || x < floor || (strictly && x == floor)) {
      fail(std::string("'") + key + "' = " + value.dump() + " is not a possible measurement");
    }
    return x;
  }

  const json& object_;
  std::string where_;
};

TransferFit fit_from(const Reader& r) {
  TransferFit fit;
  fit.latency_s = r.time("latency_s");
  fit.bytes_per_s = r.rate("bytes_per_s");
  fit.max_relative_error = r.time("max_relative_error");
  for (const auto& sample : r.array("samples")) {
    const Reader s(sample, "sample");
    fit.samples.push_back({s.rate("bytes"), s.rate("median_s"), s.rate("min_s")});
  }
  if (fit.samples.size() < 2) r.fail("a transfer fit needs at least two samples");
  return fit;
}

OverlapMeasurement overlap_from(const Reader& o) {
  OverlapMeasurement m;
  m.upload_s = o.rate("upload_s");
  m.download_s = o.rate("download_s");
  m.compute_s = o.rate("compute_s");
  m.all_three_s = o.rate("all_three_s");
  m.up_and_down_s = o.rate("up_and_down_s");
  m.upload_together_s = o.rate("upload_together_s");
  m.download_together_s = o.rate("download_together_s");
  m.compute_together_s = o.rate("compute_together_s");
  m.efficiency = o.fraction("efficiency");
  m.duplex_efficiency = o.fraction("duplex_efficiency");
  return m;
}

bool same_identity(const DeviceProfile& p, const DeviceInfo& d, std::string& difference) {
  const auto differs = [&](const std::string& what, const std::string& have, const std::string& want) {
    if (have == want) return false;
    difference = what + " is '" + want + "' now, the profile was measured with '" + have + "'";
    return true;
  };
  return !(differs("the library version", p.library_version, version) || differs("the platform", p.platform, d.platform_name) ||
           differs("the device", p.device, d.name) || differs("the vendor", p.vendor, d.vendor) ||
           differs("the driver", p.driver, d.driver_version));
}

}  // namespace

std::string profile_to_json(const DeviceProfile& p) {
  json kernels = json::array();
  for (const auto& k : p.kernels) {
    kernels.push_back({{"kernel", k.kernel}, {"dims", k.dims}, {"value_bytes", k.value_bytes},
                       {"extents", k.extents}, {"ns_per_node", k.ns_per_node}});
  }
  json variant_timings = json::array();
  for (const auto& v : p.variant_timings) {
    json seconds = json::array();
    for (const auto& [variant, s] : v.seconds) seconds.push_back({{"variant", variant}, {"seconds", s}});
    variant_timings.push_back({{"key", v.key}, {"seconds", seconds}});
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
      {"variant_timings", variant_timings},
  };
  return j.dump(2) + "\n";
}

DeviceProfile profile_from_json(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw IoError("device profile: not valid JSON");
  const Reader r(j, "");
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
  p.calibration_s = r.rate("calibration_s");
  p.upload_pinned = fit_from(r.object("upload_pinned"));
  p.download_pinned = fit_from(r.object("download_pinned"));
  p.upload_pageable = fit_from(r.object("upload_pageable"));
  p.download_pageable = fit_from(r.object("download_pageable"));
  p.upload_rect = fit_from(r.object("upload_rect"));
  p.download_rect = fit_from(r.object("download_rect"));
  p.overlap = overlap_from(r.object("overlap"));
  p.rect_overlap = overlap_from(r.object("rect_overlap"));
  p.launch_pipelined_s = r.rate("launch_pipelined_s");
  p.launch_blocking_s = r.rate("launch_blocking_s");
  p.copy_kernel_bytes_per_s = r.time("copy_kernel_bytes_per_s");  // 0: not measured (no profiling)
  p.copy_driver_bytes_per_s = r.time("copy_driver_bytes_per_s");
  for (const auto& kernel : r.array("kernels")) {
    const Reader k(kernel, "kernel");
    KernelRate rate;
    rate.kernel = k.text("kernel");
    rate.dims = k.count("dims", 1, 3);
    rate.value_bytes = k.count("value_bytes", 4, 8);
    for (const auto& extent : k.array("extents")) {
      if (!extent.is_number_unsigned()) k.fail("'extents' holds something other than node counts");
      rate.extents.push_back(extent.get<std::size_t>());
    }
    rate.ns_per_node = k.rate("ns_per_node");
    p.kernels.push_back(std::move(rate));
  }
  if (p.kernels.empty()) r.fail("no kernel rate was measured");
  p.numstreams = r.count("numstreams", 0, std::size_t{1} << 40);  // 0: CLBlast could not run
  p.axpy_wave_s = r.time("axpy_wave_s");
  p.axpy_call_s = r.time("axpy_call_s");
  for (const auto& entry : r.array("variant_timings")) {
    const Reader v(entry, "variant timing");
    VariantTimings timings;
    timings.key = v.text("key");
    for (const auto& s : v.array("seconds")) {
      const Reader one(s, "variant timing of '" + timings.key + "'");
      timings.seconds.emplace_back(one.text("variant"), one.rate("seconds"));
    }
    if (timings.seconds.empty()) v.fail("'" + timings.key + "' has no timings");
    p.variant_timings.push_back(std::move(timings));
  }
  return p;
}

DeviceProfile read_profile_file(const std::filesystem::path& path) {
  const auto bytes = detail::read_file(path);
  try {
    return profile_from_json(std::string(bytes.begin(), bytes.end()));
  } catch (const IoError& error) {
    throw IoError("'" + path.string() + "' is not a usable profile (" + error.what() + "): run `ziggurat calibrate --json`");
  }
}

std::filesystem::path profile_path(const DeviceInfo& device) {
  const auto root = cache_root();
  if (!root) return {};
  const std::string identity = device.platform_name + "\n" + device.name + "\n" + device.vendor + "\n" + device.driver_version;
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.json",
                static_cast<unsigned long long>(detail::fnv1a64(identity.data(), identity.size())));
  return *root / "profiles" / name;
}

std::optional<DeviceProfile> load_cached_profile(const DeviceInfo& device, std::string* why_not) {
  const auto path = profile_path(device);
  std::error_code error;
  if (path.empty() || !std::filesystem::exists(path, error)) return std::nullopt;
  std::string reason;
  try {
    const auto bytes = detail::read_file(path);
    DeviceProfile cached = profile_from_json(std::string(bytes.begin(), bytes.end()));
    std::string difference;
    if (same_identity(cached, device, difference)) return cached;
    reason = "stale: " + difference;
  } catch (const IoError& failure) {
    reason = std::string("unusable: ") + failure.what();
  }
  if (why_not != nullptr) *why_not = reason;
  return std::nullopt;
}

std::string store_profile(const DeviceInfo& device, const DeviceProfile& profile) {
  const auto path = profile_path(device);
  if (path.empty()) return "caching is off";
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  const std::string text = profile_to_json(profile);
  try {
    detail::write_file_atomically(path, {{text.data(), text.size()}});
  } catch (const IoError& failure) {
    return failure.what();
  }
  return {};
}

DeviceProfile load_or_calibrate(const Context& context, bool force, ProfileOrigin* origin) {
  ProfileOrigin where;
  where.path = profile_path(context.device());
  if (!force) {
    if (auto cached = load_cached_profile(context.device(), &where.remeasured_because)) {
      where.from_cache = true;
      if (origin != nullptr) *origin = where;
      return *cached;
    }
  }
  DeviceProfile measured = calibrate(context);
  if (!where.path.empty()) where.cache_write_error = store_profile(context.device(), measured);
  if (origin != nullptr) *origin = where;
  return measured;
}

}  // namespace ziggurat
