#pragma once
// The internal part of io/npy: the bytes before a .npy file's values, for any dtype, which the
// .npz writer (io/npz) also puts before each array it stores.

#include <cstddef>
#include <string>
#include <vector>

namespace ziggurat::detail {

/// The magic string, version and header of a .npy of dtype `descr` ('<f8', '<U2') and `shape`,
/// padded so that the values start at a multiple of 64 bytes.
std::string npy_prefix(const std::string& descr, const std::vector<std::size_t>& shape);

}  // namespace ziggurat::detail
