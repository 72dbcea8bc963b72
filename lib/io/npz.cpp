#include "ziggurat/io/npz.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <set>
#include <type_traits>

#include "io/npy.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

namespace ziggurat {

namespace {

// CRC-32 of zip (polynomial 0xEDB88320, reflected), a table of 256 entries made once.
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  const auto* bytes = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

// Little-endian fields of zip's records.
struct Record {
  std::string bytes;
  Record& u16(std::uint64_t value) { return put(value, 2); }
  Record& u32(std::uint64_t value) { return put(value, 4); }
  Record& text(const std::string& t) {
    bytes += t;
    return *this;
  }

 private:
  Record& put(std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes.push_back(static_cast<char>(value >> (8 * i)));
    return *this;
  }
};

constexpr std::uint64_t kZipLimit = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint16_t kVersion = 20;  // 2.0: stored entries, no ZIP64
constexpr std::uint16_t kDate = (0 << 9) | (1 << 5) | 1, kTime = 0;  // 1980-01-01 00:00

// What a local header and the central directory both say of an entry, from "version needed" on.
Record entry_fields(std::uint32_t crc, std::uint64_t size, const std::string& file) {
  Record r;
  r.u16(kVersion).u16(0).u16(0).u16(kTime).u16(kDate).u32(crc).u32(size).u32(size).u16(file.size()).u16(0);
  return r;
}

[[noreturn]] void too_large(const std::filesystem::path& path) {
  throw InvalidArgument("'" + path.string() + "': the arrays exceed what a .npz without ZIP64 holds (4 GiB, 65535 "
                        "arrays): write them as .npy files");
}

}  // namespace

template <class T>
NpzArray npz_values(std::string name, const T* values, std::vector<std::size_t> shape) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t>,
                "float, double or std::int32_t");
  std::size_t count = 1;
  for (const std::size_t extent : shape) count *= extent;
  const char* descr = std::is_same_v<T, float> ? "<f4" : std::is_same_v<T, double> ? "<f8" : "<i4";
  return {std::move(name), descr, std::move(shape), values, count * sizeof(T), {}};
}

NpzArray npz_scalar(std::string name, double value) {
  NpzArray array{std::move(name), "<f8", {}, nullptr, sizeof value, std::string(sizeof value, '\0')};
  std::memcpy(array.held.data(), &value, sizeof value);
  return array;
}

NpzArray npz_texts(std::string name, const std::vector<std::string>& texts, bool scalar) {
  if (scalar && texts.size() != 1) throw InvalidArgument("a text scalar of a .npz is one text");
  std::size_t width = 1;
  for (const std::string& t : texts) width = std::max(width, t.size());
  NpzArray array{std::move(name), "<U" + std::to_string(width), {}, nullptr, 4 * width * texts.size(), {}};
  if (!scalar) array.shape = {texts.size()};
  array.held.assign(array.bytes, '\0');
  for (std::size_t i = 0; i < texts.size(); ++i)
    for (std::size_t c = 0; c < texts[i].size(); ++c) {
      if (static_cast<unsigned char>(texts[i][c]) > 127)
        throw InvalidArgument("the text '" + texts[i] + "' of the .npz array " + array.name + " is not ASCII");
      array.held[4 * (i * width + c)] = texts[i][c];  // UTF-32LE: the code in the low byte
    }
  return array;
}

void write_npz(const std::filesystem::path& path, const std::vector<NpzArray>& arrays) {
  if (arrays.size() > 0xFFFF) too_large(path);
  std::set<std::string> names;
  std::deque<std::string> records;  // a deque: the chunks point into its strings
  std::vector<FileChunk> chunks;
  Record directory;
  std::uint64_t offset = 0;
  for (const NpzArray& array : arrays) {
    if (array.name.empty() || !names.insert(array.name).second)
      throw InvalidArgument("'" + path.string() + "': the arrays of a .npz need distinct, non-empty names ('" +
                            array.name + "')");
    const std::string file = array.name + ".npy";
    const void* values = array.data ? array.data : array.held.data();
    const std::string& prefix = records.emplace_back(detail::npy_prefix(array.descr, array.shape));
    const std::uint64_t size = prefix.size() + array.bytes;
    if (size > kZipLimit) too_large(path);
    const std::uint32_t crc = crc32(values, array.bytes, crc32(prefix.data(), prefix.size()));
    const Record fields = entry_fields(crc, size, file);
    const std::string& local = records.emplace_back(Record{}.u32(0x04034b50).text(fields.bytes).text(file).bytes);
    chunks.insert(chunks.end(), {{local.data(), local.size()}, {prefix.data(), prefix.size()}, {values, array.bytes}});
    directory.u32(0x02014b50).u16(kVersion).text(fields.bytes).u16(0).u16(0).u16(0).u32(0).u32(offset).text(file);
    offset += local.size() + size;
    if (offset > kZipLimit) too_large(path);
  }
  Record end;
  end.u32(0x06054b50).u16(0).u16(0).u16(arrays.size()).u16(arrays.size()).u32(directory.bytes.size()).u32(offset).u16(0);
  chunks.push_back({directory.bytes.data(), directory.bytes.size()});
  chunks.push_back({end.bytes.data(), end.bytes.size()});
  write_file_atomically(path, chunks);
}

template NpzArray npz_values<float>(std::string, const float*, std::vector<std::size_t>);
template NpzArray npz_values<double>(std::string, const double*, std::vector<std::size_t>);
template NpzArray npz_values<std::int32_t>(std::string, const std::int32_t*, std::vector<std::size_t>);

}  // namespace ziggurat
