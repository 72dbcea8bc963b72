#include "ziggurat/base/binary_cache.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "ziggurat/base/files.hpp"
#include "base/hash.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/version.hpp"

namespace ziggurat {

namespace {

// Entry layout: magic, key size, key, binary size, binary checksum, binary. Sizes and checksum
// are 64-bit little-endian (the library only builds for little-endian hosts).
constexpr char kMagic[8] = {'Z', 'G', 'P', 'R', 'O', 'G', '1', '\n'};

std::uint64_t read_u64(const unsigned char* at) {
  std::uint64_t value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// The binary in `file` if it is a whole, intact entry for `key`; `damaged` says whether a failure
// was damage (delete the file) rather than an intact entry for another key (leave it).
std::optional<BinaryCache::Binary> parse_entry(const std::vector<unsigned char>& file,
                                               const std::string& key, bool& damaged) {
  damaged = true;
  const std::size_t size = file.size();
  std::size_t at = sizeof kMagic;
  if (size < at + 8 || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  const std::uint64_t key_size = read_u64(file.data() + at);
  at += 8;
  if (key_size > size - at || size - at - key_size < 16) return std::nullopt;
  const auto* stored_key = file.data() + at;
  at += key_size;
  const std::uint64_t binary_size = read_u64(file.data() + at);
  const std::uint64_t checksum = read_u64(file.data() + at + 8);
  at += 16;
  if (binary_size != size - at || binary_size == 0) return std::nullopt;
  if (detail::fnv1a64(file.data() + at, binary_size) != checksum) return std::nullopt;
  damaged = false;
  if (key_size != key.size() || std::memcmp(stored_key, key.data(), key_size) != 0) return std::nullopt;
  return BinaryCache::Binary(file.begin() + static_cast<std::ptrdiff_t>(at), file.end());
}

bool disabled_by_environment() {
  const char* value = std::getenv("ZIGGURAT_CACHE");
  if (value == nullptr) return false;
  std::string setting(value);
  std::transform(setting.begin(), setting.end(), setting.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (setting == "off" || setting == "0" || setting == "no" || setting == "false") return true;
  if (setting.empty() || setting == "on" || setting == "1" || setting == "yes" || setting == "true") return false;
  throw InvalidArgument("ZIGGURAT_CACHE is '" + std::string(value) + "': set it to off, 0, no or false to turn the "
                        "caches off, or to on, 1, yes or true (or unset it) to keep them");
}

}  // namespace

std::string program_cache_key(const DeviceInfo& device, const std::string& source, const std::string& options) {
  return std::string("ziggurat program\nlibrary ") + version + "\nplatform " + device.platform_name +
         " | " + device.platform_version + "\ndevice " + device.name + "\nvendor " + device.vendor +
         "\ndriver " + device.driver_version + "\noptions " + options + "\nsource\n" + source;
}

BinaryCache::BinaryCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

BinaryCache BinaryCache::disabled() { return BinaryCache(); }

std::optional<std::filesystem::path> cache_root() {
  if (disabled_by_environment()) return std::nullopt;
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
  };
  if (const char* dir = set("ZIGGURAT_CACHE_DIR")) return std::filesystem::path(dir);
  if (const char* xdg = set("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "ziggurat";
  if (const char* home = set("HOME")) return std::filesystem::path(home) / ".cache" / "ziggurat";
  return std::nullopt;
}

BinaryCache BinaryCache::from_environment() {
  const auto root = cache_root();
  return root ? BinaryCache(*root / "programs") : disabled();
}

std::filesystem::path BinaryCache::entry_path(const std::string& key) const {
  return directory_ / (detail::hash_name(key) + ".bin");
}

std::optional<BinaryCache::Binary> BinaryCache::load(const std::string& key) {
  if (!enabled()) return std::nullopt;
  const auto path = entry_path(key);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  if (std::filesystem::is_directory(path, error)) {  // damaged: no writer of ours makes a folder
    ++damaged_;
    std::filesystem::remove_all(path, error);
    return std::nullopt;
  }
  std::vector<unsigned char> file;
  try {
    file = read_file(path);
  } catch (const IoError&) {
    return std::nullopt;  // unreadable: build from source; store() will replace it
  }
  bool damaged = false;
  auto binary = parse_entry(file, key, damaged);
  if (damaged) {
    ++damaged_;
    std::filesystem::remove(path, error);
  }
  return binary;
}

void BinaryCache::store(const std::string& key, const Binary& binary) {
  if (!enabled() || binary.empty()) return;
  try {
    std::error_code error;
    std::filesystem::create_directories(directory_, error);
    if (error) throw IoError("cannot create '" + directory_.string() + "': " + error.message());
    const std::uint64_t key_size = key.size();
    const std::uint64_t binary_size = binary.size();
    const std::uint64_t checksum = detail::fnv1a64(binary.data(), binary.size());
    write_file_atomically(entry_path(key), {{kMagic, sizeof kMagic},
                                                    {&key_size, sizeof key_size},
                                                    {key.data(), key.size()},
                                                    {&binary_size, sizeof binary_size},
                                                    {&checksum, sizeof checksum},
                                                    {binary.data(), binary.size()}});
    last_write_error_.clear();
  } catch (const IoError& failure) {
    last_write_error_ = failure.what();
  }
}

void BinaryCache::remove(const std::string& key) {
  if (!enabled()) return;
  std::error_code error;
  std::filesystem::remove(entry_path(key), error);
}

}  // namespace ziggurat
