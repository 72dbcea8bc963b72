#include "ziggurat/tuning/profile_store.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/hash.hpp"
#include "tuning/json_fields.hpp"
#include "ziggurat/base/binary_cache.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/file_lock.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/log.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/tuning/calibration.hpp"

namespace ziggurat {

namespace {

using nlohmann::json;

// Bumped whenever a tuning record's fields or their meaning change, or a kernel whose timings they
// hold changes: older files are ignored, and their choices tuned again on use. 2: the 3D heat step
// without a local tile (1.65x faster on an H200, where a record of 1 chose blocked launches).
constexpr int kTuningFormat = 2;

using detail::hash_name;

// What names a device's files: the device, its driver and this library's version, so that two
// versions sharing a cache do not replace each other's records.
std::string device_identity(const DeviceInfo& device) {
  return device.platform_name + "\n" + device.name + "\n" + device.vendor + "\n" + device.driver_version + "\n" +
         version;
}

// The identity a record must carry to be used: this library, this device and driver.
struct Identity {
  std::string library_version, platform, device, vendor, driver;
};

Identity identity_of(const DeviceInfo& d) { return {version, d.platform_name, d.name, d.vendor, d.driver_version}; }

// Why a record measured as `have` cannot serve `want`, or "".
std::string difference(const Identity& have, const Identity& want) {
  for (const auto& [what, h, w] : {std::tuple{"the library version", &have.library_version, &want.library_version},
                                   {"the platform", &have.platform, &want.platform},
                                   {"the device", &have.device, &want.device},
                                   {"the vendor", &have.vendor, &want.vendor},
                                   {"the driver", &have.driver, &want.driver}}) {
    if (*h != *w) return std::string(what) + " is '" + *w + "' now, the record was measured with '" + *h + "'";
  }
  return {};
}

// Writes `text` as `path` atomically, creating its folder; returns why it could not, or "".
std::string store_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  try {
    write_file_atomically(path, text);
  } catch (const IoError& failure) {
    return failure.what();
  }
  return {};
}

json record_json(const DeviceInfo& device, const TuningRecord& record) {
  json seconds = json::array();
  for (const auto& [variant, s] : record.seconds) seconds.push_back({{"variant", variant}, {"seconds", s}});
  const Identity id = identity_of(device);
  return {{"format", kTuningFormat}, {"library_version", id.library_version}, {"platform", id.platform},
          {"device", id.device},     {"vendor", id.vendor},                   {"driver", id.driver},
          {"key", record.key},       {"seconds", seconds}};
}

void validate(const TuningRecord& record) {
  if (record.seconds.empty()) throw InvalidArgument("tuning record '" + record.key + "' has no timings");
  for (const auto& [variant, s] : record.seconds) {
    if (!std::isfinite(s) || s <= 0) {
      throw InvalidArgument("tuning record '" + record.key + "': " + variant + " took " + std::to_string(s) +
                            " s, which no measurement gives");
    }
  }
}

// The record in `path` if it is complete and measured on `device` with this library.
std::optional<TuningRecord> read_record(const std::filesystem::path& path, const DeviceInfo& device) {
  try {
    const auto bytes = read_file(path);
    const json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("format") || j["format"] != kTuningFormat) return std::nullopt;
    const detail::JsonFields r(j, "tuning record");
    const Identity have{r.text("library_version"), r.text("platform"), r.text("device"), r.text("vendor"), r.text("driver")};
    if (!difference(have, identity_of(device)).empty()) return std::nullopt;
    TuningRecord record;
    record.key = r.text("key");
    for (const auto& entry : r.array("seconds")) {
      const auto one = r.element(entry, "timing");
      record.seconds.emplace_back(one.text("variant"), one.number("seconds"));
    }
    validate(record);
    return record;
  } catch (const Error&) {
    return std::nullopt;  // unreadable or damaged: measured again, and replaced
  }
}

// A folder where a record goes (no writer of ours makes one) is damaged: removed, so that what is
// measured instead is stored there. Returns whether there was one.
bool removed_damaged_folder(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_directory(path, error)) return false;
  std::filesystem::remove_all(path, error);
  return true;
}

}  // namespace

std::filesystem::path profile_path(const DeviceInfo& device) {
  const auto root = cache_root();
  if (!root) return {};
  return *root / "profiles" / (hash_name(device_identity(device)) + ".json");
}

std::optional<DeviceProfile> load_cached_profile(const DeviceInfo& device, std::string* why_not) {
  const auto path = profile_path(device);
  std::error_code error;
  if (path.empty() || !std::filesystem::exists(path, error)) return std::nullopt;
  if (removed_damaged_folder(path)) {
    if (why_not != nullptr) *why_not = "damaged: a folder stood in its place";
    return std::nullopt;
  }
  std::string reason;
  try {
    const auto bytes = read_file(path);
    DeviceProfile cached = profile_from_json(std::string(bytes.begin(), bytes.end()));
    const std::string stale = difference({cached.library_version, cached.platform, cached.device, cached.vendor, cached.driver},
                                         identity_of(device));
    if (stale.empty()) return cached;
    reason = "stale: " + stale;
  } catch (const IoError& failure) {
    reason = std::string("unusable: ") + failure.what();
  }
  if (why_not != nullptr) *why_not = reason;
  return std::nullopt;
}

std::string store_profile(const DeviceInfo& device, const DeviceProfile& profile) {
  const auto path = profile_path(device);
  if (path.empty()) return "caching is off";
  return store_file(path, profile_to_json(profile));
}

namespace {

// The lock under which one process at a time measures the device of `profile` (its cache file),
// or none where the cache is off or its folder cannot be written.
std::optional<FileLock> measurement_lock(const std::filesystem::path& profile) {
  if (profile.empty()) return std::nullopt;
  std::error_code error;
  std::filesystem::create_directories(profile.parent_path(), error);
  try {
    std::filesystem::path lock = profile;
    return std::make_optional<FileLock>(lock.replace_extension(".lock"));
  } catch (const IoError&) {
    return std::nullopt;  // measured unlocked; the store's error says why nothing is cached
  }
}

// "measured DEVICE in S s", at info level.
void log_measured(const std::string& device, std::chrono::steady_clock::time_point start) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log(LogLevel::info, "calibration", "measured " + device + " in " + std::to_string(seconds) + " s");
}

}  // namespace

DeviceProfile load_or_calibrate(const Context& context, bool force, ProfileOrigin* origin) {
  if (!force) return load_or_calibrate(context, ProfileNeeds::everything(), origin);
  ProfileOrigin where;
  where.path = profile_path(context.device());
  log(LogLevel::info, "calibration", "measuring " + context.device().label() + " (asked for)");
  const auto start = std::chrono::steady_clock::now();
  const std::optional<FileLock> lock = measurement_lock(where.path);
  DeviceProfile measured = calibrate(context);
  log_measured(context.device().label(), start);
  for (const auto& phase : measured.phases) where.measured.push_back(phase.name);
  if (!where.path.empty()) where.cache_write_error = store_profile(context.device(), measured);
  if (origin != nullptr) *origin = where;
  return measured;
}

DeviceProfile load_or_calibrate(const Context& context, const ProfileNeeds& needs, ProfileOrigin* origin) {
  const ProfileNeeds wanted = measurable_needs(context.device(), needs);
  const std::string device = context.device().label();
  ProfileOrigin where;
  where.path = profile_path(context.device());
  const auto holds_everything = [&](const std::optional<DeviceProfile>& profile) {
    where.from_cache = profile && missing_from(*profile, wanted).empty();
    if (origin != nullptr && where.from_cache) *origin = where;
    if (where.from_cache) log(LogLevel::debug, "calibration", "the profile of " + device + " from " + where.path.string());
    return where.from_cache;
  };
  std::optional<DeviceProfile> cached = load_cached_profile(context.device(), &where.remeasured_because);
  if (holds_everything(cached)) return *cached;
  const std::optional<FileLock> lock = measurement_lock(where.path);
  if (lock) {  // another process may have measured, or added to the profile, while this one waited
    cached = load_cached_profile(context.device(), &where.remeasured_because);
    if (holds_everything(cached)) return *cached;
  }
  log(LogLevel::info, "calibration",
      "measuring " + device + (cached                               ? " (rates this run needs are missing)"
                               : where.remeasured_because.empty() ? " (no cached profile)"
                                                                  : " (" + where.remeasured_because + ")"));
  const auto start = std::chrono::steady_clock::now();
  DeviceProfile measured;
  if (cached) {
    measured = std::move(*cached);
    const std::size_t before = measured.phases.size();
    add_measurements(context, measured, wanted);
    for (std::size_t i = before; i < measured.phases.size(); ++i) where.measured.push_back(measured.phases[i].name);
  } else {
    measured = calibrate(context, wanted);
    for (const auto& phase : measured.phases) where.measured.push_back(phase.name);
  }
  log_measured(device, start);
  if (!where.path.empty()) where.cache_write_error = store_profile(context.device(), measured);
  if (origin != nullptr) *origin = where;
  return measured;
}

std::filesystem::path tuning_record_path(const DeviceInfo& device, const std::string& key) {
  const auto root = cache_root();
  if (!root) return {};
  return *root / "tuning" / hash_name(device_identity(device)) / (hash_name(key) + ".json");
}

std::optional<TuningRecord> load_tuning_record(const DeviceInfo& device, const std::string& key) {
  const auto path = tuning_record_path(device, key);
  std::error_code error;
  if (path.empty() || !std::filesystem::exists(path, error) || removed_damaged_folder(path)) return std::nullopt;
  auto record = read_record(path, device);
  if (record && record->key != key) return std::nullopt;  // another key with the same hash
  return record;
}

std::string store_tuning_record(const DeviceInfo& device, const TuningRecord& record) {
  validate(record);
  const auto path = tuning_record_path(device, record.key);
  if (path.empty()) return "caching is off";
  return store_file(path, record_json(device, record).dump(2) + "\n");
}

std::vector<TuningRecord> list_tuning_records(const DeviceInfo& device) {
  std::vector<TuningRecord> records;
  const auto root = cache_root();
  if (!root) return records;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(*root / "tuning" / hash_name(device_identity(device)), error)) {
    if (entry.path().extension() != ".json") continue;  // e.g. a write that a crashed process left
    if (auto record = read_record(entry.path(), device)) records.push_back(std::move(*record));
  }
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return records;
}

}  // namespace ziggurat
