#include "ziggurat/io/element_files.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/io/npy.hpp"

namespace ziggurat::fem {

namespace {

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// The shapes of both files, checked before any value is read: (m, l, l) and (m, l).
void check_shapes(const std::filesystem::path& matrices, const std::vector<std::size_t>& a,
                  const std::filesystem::path& indices, const std::vector<std::size_t>& v) {
  if (a.size() != 3 || a[1] != a[2]) {
    throw IoError(quoted(matrices) + " is not a file of element matrices: its shape is " + shape_text(a) +
                  ", expected (m, l, l) (m matrices of l x l)");
  }
  if (v.size() != 2) {
    throw IoError(quoted(indices) + " is not a file of element DOF indices: its shape is " + shape_text(v) +
                  ", expected (m, l) (l global DOFs for each of m elements)");
  }
  if (a[0] != v[0] || a[1] != v[1]) {
    throw InvalidArgument(quoted(matrices) + " holds " + std::to_string(a[0]) + " elements of " +
                          std::to_string(a[1]) + " DOFs but " + quoted(indices) + " indices for " +
                          std::to_string(v[0]) + " elements of " + std::to_string(v[1]) +
                          ": give the indices file of the same model");
  }
}

// The indices as int32, every negative one -1; IoError for one that 32 bits cannot hold.
std::vector<std::int32_t> narrow_indices(const std::vector<std::int64_t>& wide, std::size_t l,
                                         const std::filesystem::path& path) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  std::vector<std::int32_t> indices(wide.size());
  for (std::size_t p = 0; p < wide.size(); ++p) {
    if (wide[p] > kMax) {
      throw IoError(quoted(path) + ": element " + std::to_string(p / l) + ", local DOF " + std::to_string(p % l) +
                    " has index " + std::to_string(wide[p]) + ", above 2^31 - 1 (the largest DOF ziggurat indexes)");
    }
    indices[p] = wide[p] < 0 ? -1 : static_cast<std::int32_t>(wide[p]);
  }
  return indices;
}

// An element's matrix whole (l x l row-major), from either storage.
template <class T>
void write_full(const ElementSet<T>& s, std::size_t e, T* out) {
  const std::size_t l = s.element_size;
  const T* stored = s.matrices.data() + e * s.stored_per_element();
  if (s.storage == ElementStorage::full) {
    std::copy(stored, stored + l * l, out);
    return;
  }
  for (std::size_t r = 0; r < l; ++r) {
    for (std::size_t c = r; c < l; ++c, ++stored) out[r * l + c] = out[c * l + r] = *stored;
  }
}

}  // namespace

template <class T>
ElementSet<T> load_elements(const std::filesystem::path& matrices, const std::filesystem::path& indices,
                            std::size_t dofs) {
  check_shapes(matrices, read_npy_header(matrices).shape, indices, read_npy_header(indices).shape);
  std::vector<std::size_t> shape;
  ElementSet<T> s;
  s.storage = ElementStorage::full;
  s.matrices = read_npy<T>(matrices, shape);
  s.element_size = shape[1];
  s.indices = narrow_indices(read_npy_integers(indices, shape), s.element_size, indices);
  const std::int32_t largest = s.indices.empty() ? -1 : *std::max_element(s.indices.begin(), s.indices.end());
  s.dofs = dofs != 0 ? dofs : largest < 0 ? 0 : static_cast<std::size_t>(largest) + 1;
  try {
    validate(s);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("the elements of " + quoted(matrices) + " and " + quoted(indices) + ": " + e.what());
  }
  return s;
}

template <class T>
void save_elements(const std::filesystem::path& matrices, const std::filesystem::path& indices,
                   const ElementSet<T>& elements) {
  validate(elements);
  const std::size_t m = elements.count(), l = elements.element_size;
  std::vector<T> full(m * l * l);
  for (std::size_t e = 0; e < m; ++e) write_full(elements, e, full.data() + e * l * l);
  write_npy(matrices, full.data(), {m, l, l});
  write_npy(indices, elements.indices.data(), {m, l});
}

template ElementSet<float> load_elements<float>(const std::filesystem::path&, const std::filesystem::path&,
                                                std::size_t);
template ElementSet<double> load_elements<double>(const std::filesystem::path&, const std::filesystem::path&,
                                                  std::size_t);
template void save_elements<float>(const std::filesystem::path&, const std::filesystem::path&,
                                   const ElementSet<float>&);
template void save_elements<double>(const std::filesystem::path&, const std::filesystem::path&,
                                    const ElementSet<double>&);

}  // namespace ziggurat::fem
