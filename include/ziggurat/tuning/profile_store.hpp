#pragma once
// Device profiles and kernel autotuning results kept on disk, so that a program pays for a
// measurement once per device, driver and library version.
//
// Every record is a file of its own, written atomically (temporary file, rename) and never read,
// modified and written back: processes that measure at the same time (parallel tests, MPI ranks,
// several users' jobs) cannot lose each other's records. Under the cache root
// (base/binary_cache.hpp: $ZIGGURAT_CACHE_DIR, else $XDG_CACHE_HOME/ziggurat, else
// ~/.cache/ziggurat):
//   profiles/<device>.json        the device's DeviceProfile (tuning/device_profile.hpp)
//   tuning/<device>/<key>.json    one TuningRecord per kind of problem
// <device> is a hash of the platform, name, vendor, driver and library version, <key> a hash of
// the record's key.
// Each file holds its full identity, so a stale or colliding file is recognised and never used; a
// folder in a record's place is damaged, removed, and the record measured and stored again.

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat {

/// The cache file for a device's profile, or an empty path when caching is off.
std::filesystem::path profile_path(const DeviceInfo& device);

/// The cached profile of `device` when the cache holds a complete one measured on this device,
/// driver and library version; otherwise nothing, and `why_not` (if given) says why: empty when
/// there is simply no cached profile, else what was wrong with the file.
std::optional<DeviceProfile> load_cached_profile(const DeviceInfo& device, std::string* why_not = nullptr);

/// Caches `profile` as the profile of `device`, atomically. Returns why it could not, or "".
std::string store_profile(const DeviceInfo& device, const DeviceProfile& profile);

/// Where a profile came from.
struct ProfileOrigin {
  bool from_cache = false;         ///< nothing was measured: the cached profile held everything
  std::vector<std::string> measured;  ///< the phases measured now, when something was
  std::filesystem::path path;      ///< the cache file, if caching is on
  std::string remeasured_because;  ///< why a cached profile was not used, if one was there
  std::string cache_write_error;   ///< why a new measurement could not be cached, if it could not
};

/// The cached profile of the context's device when there is a valid one, else a fresh
/// measurement (calibrate()), which is then cached. A corrupt or stale file is measured again,
/// never trusted. `force` measures regardless. Processes measure a device one at a time (a lock
/// file, profiles/<device>.lock, taken with flock): one that waited for another's measurement reads
/// the profile it stored instead of measuring under its contention. Where the lock cannot be
/// taken (the cache folder is not writable), the process measures without it.
DeviceProfile load_or_calibrate(const Context& context, bool force = false, ProfileOrigin* origin = nullptr);

/// The same for a command that plans with what `needs` names: a cached profile that holds it is
/// used as it is; one that lacks some of it gets what it lacks measured (add_measurements()) and
/// stored again, under the same lock, so that processes of different commands add their rates to
/// one profile and none is measured twice; without a usable cached profile, the device figures and
/// `needs` are measured (calibrate(context, needs)). Rates the device cannot run (double without
/// fp64) are not measured: the model that asks for them says so.
DeviceProfile load_or_calibrate(const Context& context, const ProfileNeeds& needs, ProfileOrigin* origin = nullptr);

/// What autotuning measured for one kind of problem on one device: each variant's time per run,
/// fastest first.
struct TuningRecord {
  std::string key;  ///< the kind of problem, e.g. "bsr f32 b4 k8 len3 even size8"
  std::vector<std::pair<std::string, double>> seconds;
};

/// The cache file of `key`'s record on `device`, or an empty path when caching is off.
std::filesystem::path tuning_record_path(const DeviceInfo& device, const std::string& key);

/// The cached record of `key` on `device`, measured with this driver and library version, or
/// nothing (no file, or a file that is damaged, stale or for another key).
std::optional<TuningRecord> load_tuning_record(const DeviceInfo& device, const std::string& key);

/// Caches `record` for `device`, atomically. Returns why it could not, or "". InvalidArgument for
/// a record without timings, or with a time that is not positive and finite.
std::string store_tuning_record(const DeviceInfo& device, const TuningRecord& record);

/// Every usable record cached for `device`, ordered by key.
std::vector<TuningRecord> list_tuning_records(const DeviceInfo& device);

}  // namespace ziggurat
