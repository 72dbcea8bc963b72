#pragma once
// The on-disk cache of compiled OpenCL program binaries.
//
// An entry is keyed by everything that determines the binary: the final source text, the build
// options, the platform, the device name, vendor and driver version, and ziggurat's version. The
// file name is a hash of that key; the file holds the full key too, so a hash collision or a stale
// entry is recognised and never used. Entries are written to a temporary file and renamed, so a
// reader sees a whole entry or none. An entry that is truncated, fails its checksum, is a folder, or
// that the driver refuses to load or build is deleted and rebuilt from source.
//
// Location: programs/ under $ZIGGURAT_CACHE_DIR, else $XDG_CACHE_HOME/ziggurat, else
// $HOME/.cache/ziggurat. ZIGGURAT_CACHE=off (or 0, no, false; any case) disables it; on, 1, yes,
// true or an empty value leave it on; any other value is refused (InvalidArgument from
// cache_root()), rather than read as on.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ziggurat {

struct DeviceInfo;

/// The folder of ziggurat's on-disk caches (program binaries, device profiles, tuning records),
/// as the environment sets it (see above); nothing when caching is off or no location is known.
std::optional<std::filesystem::path> cache_root();

/// The key of a program binary: everything that determines it (see above).
std::string program_cache_key(const DeviceInfo& device, const std::string& source, const std::string& options);

class BinaryCache {
 public:
  using Binary = std::vector<unsigned char>;

  /// The cache the environment describes (see above); disabled when no location can be found.
  static BinaryCache from_environment();
  /// A cache in `directory` (created on first store).
  explicit BinaryCache(std::filesystem::path directory);
  /// A cache that stores nothing and finds nothing.
  static BinaryCache disabled();

  bool enabled() const noexcept { return !directory_.empty(); }
  const std::filesystem::path& directory() const noexcept { return directory_; }

  /// The binary stored under `key`, or nothing. A damaged entry is deleted (and counted).
  std::optional<Binary> load(const std::string& key);
  /// Stores `binary` under `key` atomically. A failure to write (full disk, read-only folder) is
  /// not an error for the computation: it is recorded in last_write_error() and otherwise ignored.
  void store(const std::string& key, const Binary& binary);
  /// Deletes the entry for `key`, if any (used when the driver refuses a stored binary).
  void remove(const std::string& key);

  std::filesystem::path entry_path(const std::string& key) const;
  std::size_t damaged_entries_deleted() const noexcept { return damaged_; }
  const std::string& last_write_error() const noexcept { return last_write_error_; }

 private:
  BinaryCache() = default;
  std::filesystem::path directory_;
  std::size_t damaged_ = 0;
  std::string last_write_error_;
};

}  // namespace ziggurat
