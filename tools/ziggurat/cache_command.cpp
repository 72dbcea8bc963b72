// `ziggurat cache`: where the caches are and what they hold (program binaries, device profiles,
// autotuning records); --clear empties the program cache. A cache folder that cannot hold
// anything (a file in its place, no write permission) is an error, not "0 entries".

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "format.hpp"
#include "ziggurat/base/binary_cache.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

namespace {

namespace fs = std::filesystem;

// Why nothing can be cached in `folder` (made on the first store where it is missing), or "".
std::string unusable(const fs::path& folder) {
  std::error_code error;
  fs::path existing = folder;
  while (!fs::exists(existing, error) && existing.has_parent_path() && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, error))
    return existing == folder ? "it is not a folder" : "'" + existing.string() + "' in its path is not a folder";
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    return existing == folder ? "it cannot be written" : "'" + existing.string() + "' cannot be written";
  return {};
}

void require_usable(const fs::path& folder) {
  const std::string why = unusable(folder);
  if (!why.empty()) {
    throw IoError("the cache folder " + folder.string() + " cannot hold anything: " + why + ", so every run compiles "
                  "and measures again: remove what is in the way, or set ZIGGURAT_CACHE_DIR to a writable folder");
  }
}

// The records under `folder`: .json files, and entries of that name that are not files (damaged).
struct Count {
  std::size_t files = 0, damaged = 0;
};

Count count_json_files(const fs::path& folder) {
  Count count;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(folder, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (it->path().extension() != ".json") continue;
    ++(it->is_regular_file(error) ? count.files : count.damaged);
  }
  return count;
}

std::string json_files(const fs::path& folder) {
  const Count count = count_json_files(folder);
  return std::to_string(count.files) + (count.files == 1 ? " file" : " files") +
         (count.damaged > 0 ? ", " + std::to_string(count.damaged) + " damaged (not files; ignored)" : "");
}

void run_cache(bool clear) {
  const BinaryCache cache = BinaryCache::from_environment();
  if (!cache.enabled()) {
    std::cout << "the program cache is off (ZIGGURAT_CACHE=off, or no ZIGGURAT_CACHE_DIR, XDG_CACHE_HOME or HOME)\n";
    return;
  }
  const auto root = cache_root();
  for (const fs::path& folder : {*root, cache.directory(), *root / "profiles", *root / "tuning"}) require_usable(folder);
  // Entries are NAME.bin; NAME.bin.tmp-* are writes that a crashed process left behind; an entry
  // that is not a file (a folder) is damaged: the next build of its program or --clear deletes it.
  std::size_t entries = 0, leftovers = 0, damaged = 0;
  std::uintmax_t bytes = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(cache.directory(), error)) {
    const std::string name = entry.path().filename().string();
    const bool is_entry = entry.path().extension() == ".bin";
    if (!is_entry && name.find(".bin.tmp-") == std::string::npos) continue;
    std::error_code kind;
    const bool file = entry.is_regular_file(kind);
    ++(!file ? damaged : is_entry ? entries : leftovers);
    const std::uintmax_t size = file ? entry.file_size(kind) : 0;
    if (!kind) bytes += size;
    if (clear && fs::remove_all(entry.path(), kind) == 0 && kind) {  // not there: another process was first
      throw IoError("cannot delete '" + entry.path().string() + "': " + kind.message());
    }
  }
  if (error && error != std::errc::no_such_file_or_directory)
    throw IoError("cannot read the program cache " + cache.directory().string() + ": " + error.message());
  std::cout << "program cache " << cache.directory().string() << ": " << entries << " entries";
  if (leftovers > 0) std::cout << " and " << leftovers << " unfinished writes";
  if (damaged > 0) std::cout << " and " << damaged << " damaged (not files)";
  std::cout << ", " << bytes_text(bytes) << (clear ? ", deleted" : "") << "\n";
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
