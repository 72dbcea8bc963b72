// `ziggurat cache`: where the caches are and what they hold (program binaries, device profiles,
// autotuning records); --clear empties the program cache.

#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "format.hpp"
#include "ziggurat/base/binary_cache.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

namespace {

// The .json files under `folder`: one record each.
std::size_t count_json_files(const std::filesystem::path& folder) {
  std::size_t count = 0;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(folder, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    count += it->path().extension() == ".json";
  }
  return count;
}

std::string json_files(const std::filesystem::path& folder) {
  const std::size_t count = count_json_files(folder);
  return std::to_string(count) + (count == 1 ? " file" : " files");
}

void run_cache(bool clear) {
  const BinaryCache cache = BinaryCache::from_environment();
  if (!cache.enabled()) {
    std::cout << "the program cache is off (ZIGGURAT_CACHE=off, or no ZIGGURAT_CACHE_DIR, XDG_CACHE_HOME or HOME)\n";
    return;
  }
  // Entries are NAME.bin; NAME.bin.tmp-* are writes that a crashed process left behind.
  std::size_t entries = 0, leftovers = 0;
  std::uintmax_t bytes = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(cache.directory(), error)) {
    const std::string name = entry.path().filename().string();
    const bool is_entry = entry.path().extension() == ".bin";
    if (!is_entry && name.find(".bin.tmp-") == std::string::npos) continue;
    ++(is_entry ? entries : leftovers);
    const std::uintmax_t size = entry.file_size(error);
    if (!error) bytes += size;
    if (clear && !std::filesystem::remove(entry.path(), error) && error) {  // not there: another process was first
      throw IoError("cannot delete '" + entry.path().string() + "': " + error.message());
    }
  }
  std::cout << "program cache " << cache.directory().string() << ": " << entries << " entries";
  if (leftovers > 0) std::cout << " and " << leftovers << " unfinished writes";
  std::cout << ", " << bytes_text(bytes) << (clear ? ", deleted" : "") << "\n";
  const auto root = cache_root();
  std::cout << "device profiles " << (*root / "profiles").string() << ": " << json_files(*root / "profiles") << "\n"
            << "autotuning records " << (*root / "tuning").string() << ": " << json_files(*root / "tuning") << "\n";
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto* command = app.add_subcommand("cache", "Show the on-disk caches (programs, device profiles, autotuning records); "
                                              "--clear empties the program cache");
  auto clear = std::make_shared<bool>(false);
  command->add_flag("--clear", *clear, "Delete every cached program binary");
  command->callback([clear] { run_cache(*clear); });
}

}  // namespace ziggurat::cli
