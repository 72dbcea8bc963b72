#pragma once
// Whole-file reads and atomic writes: a file written by ziggurat (an output, a cache entry, a
// profile) appears whole under its name or not at all, even when several processes write it at
// once (temporary file in the same folder, fsync, rename). Only a regular file (or nothing) is
// ever renamed over: a device or a FIFO at the path (/dev/null, a pipe) is written in place, and
// a symbolic link is followed, so that the link stays and the file it names is replaced.

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace ziggurat {

/// A piece of a file's new content.
struct FileChunk {
  const void* data;
  std::size_t size;
};

/// The bytes of a file. Throws IoError naming the file and the reason (a folder is refused).
std::vector<unsigned char> read_file(const std::filesystem::path& path);

/// Writes the chunks, in order, as the new content of `path`: readers see the old file or the
/// complete new one, never a part. Throws IoError naming the file and the reason, a full disk
/// or device (ENOSPC) included.
void write_file_atomically(const std::filesystem::path& path, std::initializer_list<FileChunk> chunks);
void write_file_atomically(const std::filesystem::path& path, const std::vector<FileChunk>& chunks);
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

/// A new name for a temporary file beside `path` (where `path` is a link, beside the file it
/// names; where it is a device or FIFO, which is written in place, in the temporary folder),
/// unique to this process: host, process id and a counter. A temporary of this pattern left by a
/// process that died (kill -9) is removed by the next write of `path` on that host.
std::filesystem::path temporary_beside(const std::filesystem::path& path);

/// Puts the finished file `temporary` (from temporary_beside(path)) at `path` as
/// write_file_atomically() does: renamed over a regular file, copied into a device or FIFO and
/// then removed. Throws IoError (and removes `temporary`) when that fails.
void publish_file(const std::filesystem::path& temporary, const std::filesystem::path& path);

}  // namespace ziggurat
