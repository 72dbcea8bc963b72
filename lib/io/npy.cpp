#include "ziggurat/io/npy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <type_traits>

#include "base/system_error.hpp"
#include "io/npy.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

std::size_t item_size(NpyType type) { return type == NpyType::f32 || type == NpyType::i32 ? 4 : 8; }

const char* descr_of(NpyType type) {
  switch (type) {
    case NpyType::f32: return "<f4";
    case NpyType::f64: return "<f8";
    case NpyType::i32: return "<i4";
    case NpyType::i64: return "<i8";
  }
  return "";
}

bool is_integer(NpyType type) { return type == NpyType::i32 || type == NpyType::i64; }

[[noreturn]] void bad(const std::filesystem::path& path, const std::string& problem) {
  throw IoError("'" + path.string() + "' is not a usable .npy file: " + problem);
}

// A parser for the Python dict literal of a .npy header, e.g.
//   {'descr': '<f8', 'fortran_order': False, 'shape': (777, 1023), }
// It accepts exactly what NumPy writes: string keys; string, boolean and integer-tuple values.
class HeaderParser {
 public:
  HeaderParser(std::string text, const std::filesystem::path& path) : text_(std::move(text)), path_(path) {}

  struct Fields {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::size_t> shape;
  };

  Fields parse() {
    Fields fields;
    std::map<std::string, bool> seen;
    expect('{');
    while (!peek('}')) {
      const std::string key = string_literal();
      expect(':');
      if (seen[key]) fail("key '" + key + "' appears twice");
      seen[key] = true;
      if (key == "descr") {
        fields.descr = string_literal();
      } else if (key == "fortran_order") {
        fields.fortran_order = boolean();
      } else if (key == "shape") {
        fields.shape = tuple();
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (at_ != text_.size()) fail("has text after its closing '}' at character " + std::to_string(at_));
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      if (!seen[key]) fail(std::string("the header has no '") + key + "'");
    }
    return fields;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) { bad(path_, "header " + problem); }

  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool peek(char c) {
    skip_space();
    return at_ < text_.size() && text_[at_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "' at character " + std::to_string(at_));
    ++at_;
  }
  std::string string_literal() {
    skip_space();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) {
      fail("expected a quoted string at character " + std::to_string(at_));
    }
    const char quote = text_[at_++];
    const auto end = text_.find(quote, at_);
    if (end == std::string::npos) fail("has an unterminated string");
    std::string value = text_.substr(at_, end - at_);
    at_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.compare(at_, std::strlen(word), word) == 0) {
        at_ += std::strlen(word);
        return value;
      }
    }
    fail("expected True or False at character " + std::to_string(at_));
  }
  std::vector<std::size_t> tuple() {
    std::vector<std::size_t> values;
    expect('(');
    while (!peek(')')) {
      const std::size_t start = at_;
      std::size_t value = 0;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        const std::size_t digit = static_cast<std::size_t>(text_[at_++] - '0');
        if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) fail("has a shape too large");
        value = value * 10 + digit;
      }
      if (at_ == start) fail("expected a non-negative integer in the shape at character " + std::to_string(at_));
      if (at_ < text_.size() && text_[at_] == 'L') ++at_;  // written by Python 2
      values.push_back(value);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return values;
  }

  std::string text_;
  const std::filesystem::path& path_;
  std::size_t at_ = 0;
};

// What a reader takes: values (grids, vectors) are floats, indices integers.
enum class Kind { any, floats, integers };

// Checked before the file's size, so that a file of the wrong kind is named as such.
void check_kind(NpyType type, Kind kind, const std::filesystem::path& path) {
  if (kind == Kind::floats && is_integer(type)) {
    bad(path, std::string("its dtype is '") + descr_of(type) + "' (integers); float32 ('<f4') or float64 ('<f8') "
              "values are needed here: convert with numpy, e.g. a.astype(numpy.float64)");
  }
  if (kind == Kind::integers && !is_integer(type)) {
    bad(path, std::string("its dtype is '") + descr_of(type) + "'; indices are read from int32 ('<i4') or int64 "
              "('<i8') arrays: convert with numpy, e.g. a.astype(numpy.int32)");
  }
}

NpyType parse_descr(const std::string& descr, const std::filesystem::path& path) {
  for (const NpyType type : {NpyType::f32, NpyType::f64, NpyType::i32, NpyType::i64}) {
    const std::string little = descr_of(type);
    if (descr == little) return type;
    if (descr == ">" + little.substr(1)) {
      bad(path, "its values are big-endian ('" + descr + "'); convert with numpy: a.astype('" + little + "')");
    }
  }
  bad(path, "its dtype is '" + descr + "'; ziggurat reads float32 ('<f4') and float64 ('<f8') arrays, and "
            "int32 ('<i4') and int64 ('<i8') ones for indices: convert with numpy, e.g. a.astype(numpy.float64)");
}

template <class T>
constexpr NpyType npy_type_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t>,
                "float, double or std::int32_t");
  return std::is_same_v<T, float> ? NpyType::f32 : std::is_same_v<T, double> ? NpyType::f64 : NpyType::i32;
}

std::size_t element_count(const std::vector<std::size_t>& shape, const std::filesystem::path& path) {
  std::size_t count = 1;
  for (const std::size_t extent : shape) {
    if (extent != 0 && count > std::numeric_limits<std::size_t>::max() / extent) bad(path, "its shape is too large");
    count *= extent;
  }
  return count;
}

// The shape as Python writes a tuple: (), (5,), (777, 1023).
std::string python_tuple(const std::vector<std::size_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::size_t value_bytes(NpyType type) { return type == NpyType::f32 || type == NpyType::i32 ? 4 : 8; }

template <class From, class To>
void convert_stream(std::ifstream& in, To* out, std::size_t count, const std::filesystem::path& path) {
  constexpr std::size_t kChunk = 1 << 16;
  std::vector<From> buffer(std::min(count, kChunk));
  for (std::size_t done = 0; done < count;) {
    const std::size_t n = std::min(kChunk, count - done);
    if (!in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(n * sizeof(From)))) {
      bad(path, "it ended while its values were being read");
    }
    std::transform(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n), out + done,
                   [](From value) { return static_cast<To>(value); });
    done += n;
  }
}

NpyHeader read_header(const std::filesystem::path& path, Kind kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + path.string() + "': " + detail::system_error_text(errno));
  unsigned char prefix[12] = {};
  in.read(reinterpret_cast<char*>(prefix), 10);
  if (in.gcount() < 10 || std::memcmp(prefix, kMagic, kMagicSize) != 0) {
    bad(path, "it does not start with the .npy magic string \\x93NUMPY");
  }
  const unsigned major = prefix[6];
  std::size_t header_size = 0;
  std::size_t prefix_size = 10;
  if (major == 1) {
    header_size = prefix[8] | (prefix[9] << 8);
  } else if (major == 2 || major == 3) {
    in.read(reinterpret_cast<char*>(prefix + 10), 2);
    if (in.gcount() < 2) bad(path, "it ends inside its header");
    header_size = prefix[8] | (prefix[9] << 8) | (prefix[10] << 16) | (static_cast<std::size_t>(prefix[11]) << 24);
    prefix_size = 12;
  } else {
    bad(path, "format version " + std::to_string(major) + "." + std::to_string(prefix[7]) +
                  " is not supported (1.0 to 3.0 are)");
  }
  std::error_code error;
  const std::uintmax_t actual = std::filesystem::file_size(path, error);
  if (error) throw IoError("cannot read the size of '" + path.string() + "': " + error.message());
  if (prefix_size + header_size > actual) {  // before the header's text is allocated
    bad(path, "it ends inside its header: the header declares " + std::to_string(header_size) +
                  " bytes, the file has " + std::to_string(actual) + " in all");
  }
  std::string text(header_size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_size));
  if (static_cast<std::size_t>(in.gcount()) != header_size) bad(path, "it ends inside its header");

  const auto fields = HeaderParser(text, path).parse();
  if (fields.fortran_order) {
    bad(path, "it is in Fortran order; save numpy.ascontiguousarray(a) instead");
  }
  NpyHeader header;
  header.type = parse_descr(fields.descr, path);
  check_kind(header.type, kind, path);
  header.shape = fields.shape;
  header.data_offset = prefix_size + header_size;

  const std::size_t count = element_count(header.shape, path);
  if (count > (std::numeric_limits<std::size_t>::max() - header.data_offset) / item_size(header.type)) {
    bad(path, "its shape is too large");
  }
  const std::uintmax_t expected = header.data_offset + count * item_size(header.type);
  if (actual < expected) {
    bad(path, "it is truncated: shape " + python_tuple(header.shape) + " needs " + std::to_string(expected) +
                  " bytes, the file has " + std::to_string(actual));
  }
  if (actual > expected) {
    bad(path, "it has " + std::to_string(actual - expected) + " bytes after the data of shape " +
                  python_tuple(header.shape));
  }
  return header;
}

// The values of the file converted to T; the caller has checked that the header's type suits T.
// The values [first, first + count) of the file (all of them by default), converted to T.
template <class T>
std::vector<T> read_converted(const std::filesystem::path& path, const NpyHeader& header, std::size_t first = 0,
                              std::size_t count = std::numeric_limits<std::size_t>::max()) {
  count = std::min(count, element_count(header.shape, path) - first);
  std::vector<T> values(count);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(header.data_offset + first * value_bytes(header.type)));
  if (!in) throw IoError("cannot read '" + path.string() + "': " + detail::system_error_text(errno));
  switch (header.type) {
    case NpyType::f32: convert_stream<float>(in, values.data(), count, path); break;
    case NpyType::f64: convert_stream<double>(in, values.data(), count, path); break;
    case NpyType::i32: convert_stream<std::int32_t>(in, values.data(), count, path); break;
    case NpyType::i64: convert_stream<std::int64_t>(in, values.data(), count, path); break;
  }
  return values;
}

}  // namespace

NpyHeader read_npy_header(const std::filesystem::path& path) { return read_header(path, Kind::any); }

template <class T>
std::vector<T> read_npy(const std::filesystem::path& path, std::vector<std::size_t>& shape) {
  const NpyHeader header = read_header(path, Kind::floats);
  auto values = read_converted<T>(path, header);
  shape = header.shape;
  return values;
}

std::vector<std::int64_t> read_npy_integers(const std::filesystem::path& path, std::vector<std::size_t>& shape) {
  const NpyHeader header = read_header(path, Kind::integers);
  auto values = read_converted<std::int64_t>(path, header);
  shape = header.shape;
  return values;
}

namespace detail {

std::string npy_prefix(const std::string& descr, const std::vector<std::size_t>& shape) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + python_tuple(shape) + ", }";
  // Version 1.0 holds headers up to 65535 bytes; the whole prefix is padded to 64 bytes.
  const bool version2 = header.size() + 11 + 64 > 65535;
  const std::size_t prefix_size = version2 ? 12 : 10;
  header.append(63 - (prefix_size + header.size()) % 64, ' ');
  header += '\n';
  std::string prefix(kMagic, kMagicSize);
  prefix.push_back(static_cast<char>(version2 ? 2 : 1));
  prefix.push_back(0);
  for (std::size_t i = 0; i < prefix_size - 8; ++i) prefix.push_back(static_cast<char>(header.size() >> (8 * i)));
  return prefix + header;
}

}  // namespace detail

namespace {

// The bytes before the values of a .npy file of T and `shape`.
template <class T>
std::string npy_prefix(const std::vector<std::size_t>& shape) {
  return detail::npy_prefix(descr_of(npy_type_of<T>()), shape);
}

}  // namespace

template <class T>
void write_npy(const std::filesystem::path& path, const T* values, const std::vector<std::size_t>& shape) {
  const std::string prefix = npy_prefix<T>(shape);
  const std::size_t count = element_count(shape, path);
  write_file_atomically(path, {{prefix.data(), prefix.size()}, {values, count * sizeof(T)}});
}

template <class T>
void create_npy(const std::filesystem::path& path, const std::vector<std::size_t>& shape) {
  const std::string prefix = npy_prefix<T>(shape);
  const std::size_t bytes = prefix.size() + element_count(shape, path) * sizeof(T);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw IoError("cannot create '" + path.string() + "': " + detail::system_error_text(errno));
  const bool written = ::pwrite(fd, prefix.data(), prefix.size(), 0) == static_cast<ssize_t>(prefix.size()) &&
                       ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
  const int error = errno;
  ::close(fd);
  if (!written) throw IoError("cannot write '" + path.string() + "': " + detail::system_error_text(error));
}

template <class T>
void write_npy_rows(const std::filesystem::path& path, std::size_t first, const T* values, std::size_t rows) {
  const NpyHeader header = read_header(path, Kind::any);
  if (header.type != npy_type_of<T>() || header.shape.empty() || first + rows > header.shape[0])
    bad(path, "rows " + std::to_string(first) + " to " + std::to_string(first + rows) + " of " +
                  descr_of(npy_type_of<T>()) + " do not fit its shape " + python_tuple(header.shape));
  if (rows == 0) return;
  const std::size_t row_bytes = element_count(header.shape, path) / header.shape[0] * sizeof(T), bytes = rows * row_bytes;
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) throw IoError("cannot open '" + path.string() + "': " + detail::system_error_text(errno));
  const char* from = reinterpret_cast<const char*>(values);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pwrite(fd, from + done, bytes - done, static_cast<off_t>(header.data_offset + first * row_bytes + done));
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  const bool written = done == bytes && ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!written) throw IoError("cannot write '" + path.string() + "': " + detail::system_error_text(error));
}

template <class T>
Grid<T> load_grid(const std::filesystem::path& path) {
  const NpyHeader header = read_header(path, Kind::floats);
  if (header.shape.empty() || header.shape.size() > 3) {
    bad(path, "a grid needs a 1-, 2- or 3-dimensional array, this one has shape " + python_tuple(header.shape));
  }
  if (element_count(header.shape, path) == 0) bad(path, "its shape " + python_tuple(header.shape) + " holds no values");
  return Grid<T>(std::vector<std::size_t>(header.shape.rbegin(), header.shape.rend()), read_converted<T>(path, header));
}

template <class T>
Grid<T> load_grid_rows(const std::filesystem::path& path, std::size_t first, std::size_t count) {
  const NpyHeader header = read_header(path, Kind::floats);
  if (header.shape.empty() || header.shape.size() > 3) {
    bad(path, "a grid needs a 1-, 2- or 3-dimensional array, this one has shape " + python_tuple(header.shape));
  }
  if (count == 0 || first + count > header.shape[0])
    bad(path, "rows " + std::to_string(first) + " to " + std::to_string(first + count) + " lie outside its shape " +
                  python_tuple(header.shape));
  std::vector<std::size_t> extents(header.shape.rbegin(), header.shape.rend());
  extents.back() = count;
  const std::size_t row = element_count(header.shape, path) / header.shape[0];
  return Grid<T>(extents, read_converted<T>(path, header, first * row, count * row));
}

template <class T>
void save_grid(const std::filesystem::path& path, const Grid<T>& grid) {
  const auto& extents = grid.extents();
  write_npy(path, grid.data(), std::vector<std::size_t>(extents.rbegin(), extents.rend()));
}

template std::vector<float> read_npy<float>(const std::filesystem::path&, std::vector<std::size_t>&);
template std::vector<double> read_npy<double>(const std::filesystem::path&, std::vector<std::size_t>&);
template void write_npy<float>(const std::filesystem::path&, const float*, const std::vector<std::size_t>&);
template void write_npy<double>(const std::filesystem::path&, const double*, const std::vector<std::size_t>&);
template void write_npy<std::int32_t>(const std::filesystem::path&, const std::int32_t*, const std::vector<std::size_t>&);
template void create_npy<float>(const std::filesystem::path&, const std::vector<std::size_t>&);
template void create_npy<double>(const std::filesystem::path&, const std::vector<std::size_t>&);
template void write_npy_rows<float>(const std::filesystem::path&, std::size_t, const float*, std::size_t);
template void write_npy_rows<double>(const std::filesystem::path&, std::size_t, const double*, std::size_t);
template Grid<float> load_grid_rows<float>(const std::filesystem::path&, std::size_t, std::size_t);
template Grid<double> load_grid_rows<double>(const std::filesystem::path&, std::size_t, std::size_t);
template Grid<float> load_grid<float>(const std::filesystem::path&);
template Grid<double> load_grid<double>(const std::filesystem::path&);
template void save_grid<float>(const std::filesystem::path&, const Grid<float>&);
template void save_grid<double>(const std::filesystem::path&, const Grid<double>&);

}  // namespace ziggurat
