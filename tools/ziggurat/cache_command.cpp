// `ziggurat cache`: where the program-binary cache is, what it holds; --clear empties it.

#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "format.hpp"
#include "ziggurat/binary_cache.hpp"
#include "ziggurat/error.hpp"

namespace ziggurat::cli {

namespace {

void run_cache(bool clear) {
  const BinaryCache cache = BinaryCache::from_environment();
  if (!cache.enabled()) {
    std::cout << "the program cache is off (ZIGGURAT_CACHE=off, or no ZIGGURAT_CACHE_DIR, XDG_CACHE_HOME or HOME)\n";
    return;
  }
  std::size_t entries = 0;
  std::uintmax_t bytes = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(cache.directory(), error)) {
    if (entry.path().extension() != ".bin") continue;
    ++entries;
    bytes += entry.file_size(error);
    if (clear && !std::filesystem::remove(entry.path(), error)) {
      throw IoError("cannot delete '" + entry.path().string() + "': " + error.message());
    }
  }
  std::cout << "program cache " << cache.directory().string() << ": " << entries << " entries, "
            << bytes_text(bytes) << (clear ? ", deleted" : "") << "\n";
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto* command = app.add_subcommand("cache", "Show (or --clear) the on-disk program-binary cache");
  auto clear = std::make_shared<bool>(false);
  command->add_flag("--clear", *clear, "Delete every cached program binary");
  command->callback([clear] { run_cache(*clear); });
}

}  // namespace ziggurat::cli
