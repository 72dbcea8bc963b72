#pragma once
// Whole-file reads and atomic writes (temporary file in the same folder, fsync, rename).

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace ziggurat::detail {

struct Chunk {
  const void* data;
  std::size_t size;
};

/// The bytes of a file. Throws IoError naming the file and the reason.
std::vector<unsigned char> read_file(const std::filesystem::path& path);

/// Writes the chunks, in order, as the new content of `path`: readers see the old file or the
/// complete new one, never a part. Throws IoError naming the file and the reason.
void write_file_atomically(const std::filesystem::path& path, std::initializer_list<Chunk> chunks);

/// strerror for errno values, thread-safe.
std::string system_error_text(int error);

}  // namespace ziggurat::detail
