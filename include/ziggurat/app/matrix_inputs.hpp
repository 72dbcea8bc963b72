#pragma once
// The Matrix Market files a command or benchmark reads: the files a list names, and the host
// memory each needs, checked from its size line before it is read (a 3-line file may declare a
// 4e9 x 4e9 matrix).

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace ziggurat::app {

/// Throws InvalidArgument naming `option`, from the size line of the file at `path` alone, unless
/// the host's memory holds the matrix twice (the CSR read, the block CSR made from it) and
/// `vectors` vectors as long as its rows or columns, all in values of `value_bytes`. IoError for a
/// file whose banner or size line is bad.
void check_matrix_memory(const std::string& option, const std::string& path, std::size_t vectors,
                         std::size_t value_bytes);

/// The files of a comma-separated list of Matrix Market files and folders (a folder gives its .mtx
/// files, sorted), each checked by check_matrix_memory() with `vectors` vectors of doubles.
/// InvalidArgument naming `option` for a path that does not exist.
std::vector<std::filesystem::path> matrix_files(const std::string& list, const std::string& option,
                                                std::size_t vectors);

}  // namespace ziggurat::app
