#pragma once
// An exclusive lock between processes on one file (flock): the processes that lock the same path
// run the locked part one at a time, and the lock goes when its holder ends, however it ends.

#include <filesystem>

namespace ziggurat {

class FileLock {
 public:
  /// Waits until this process holds the lock of `path` (created, empty, if missing; never
  /// removed, so that every waiter locks the same file). Throws IoError naming the file when it
  /// cannot be opened or locked.
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int descriptor_ = -1;
};

}  // namespace ziggurat
