#pragma once
// Whole-file reads and atomic writes: a file written by ziggurat (an output, a cache entry, a
// profile) appears whole under its name or not at all, even when several processes write it at
// once (temporary file in the same folder, fsync, rename).

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

/// The bytes of a file. Throws IoError naming the file and the reason.
std::vector<unsigned char> read_file(const std::filesystem::path& path);

/// Writes the chunks, in order, as the new content of `path`: readers see the old file or the
/// complete new one, never a part. Throws IoError naming the file and the reason.
void write_file_atomically(const std::filesystem::path& path, std::initializer_list<FileChunk> chunks);
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace ziggurat
