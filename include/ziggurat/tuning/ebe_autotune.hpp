#pragma once
// Choosing how element-by-element products run (ops/ebe.hpp): the scatter of Y = K X (colouring or
// atomic adds) and the projection's layout (tiles, columns or tensor), each timed once per kind of problem
// and device on the elements themselves (a prefix of at most 2^19 of them), and kept as a tuning
// record (tuning/profile_store.hpp) that later runs only read.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/ops/ebe.hpp"

namespace ziggurat::fem {

struct EbeScatterChoice {
  EbeScatter scatter = EbeScatter::colouring;
  std::string key;            ///< the kind of problem, as kept in the tuning record
  bool measured_now = false;  ///< false when read from the record
  std::vector<std::pair<std::string, double>> seconds;  ///< per scatter, fastest first
};

/// "ebe f64 l24 k35": precision, element size and vectors.
template <class T>
std::string ebe_problem_key(const ElementSet<T>& elements, std::size_t k);

/// The faster scatter for products with k vectors on this device (atomics only where the device
/// can run them), from the record of this kind of problem or measured now and recorded.
template <class T>
EbeScatterChoice choose_ebe_scatter(const Context& context, const ElementSet<T>& elements, std::size_t k);

struct EbeLayoutChoice {
  EbeLayout layout = EbeLayout::tiles;
  std::string key;            ///< "ebe projection f64 l24 k27"
  bool measured_now = false;  ///< false when read from the record
  std::vector<std::pair<std::string, double>> seconds;  ///< per layout, fastest first
};

/// The fastest projection layout for k vectors on this device, from the record of this kind of
/// problem or measured now and recorded. Columns are timed only where they issue no more
/// multiply-adds than tiles (ebe_projection_steps(): at 27, 28, 32 or 64 vectors of 24-DOF
/// bricks), tensor wherever ebe_tensor_refusal() finds no reason against it (a record without it
/// is measured again there); elsewhere the choice is tiles, with tiles' time alone in `seconds`.
template <class T>
EbeLayoutChoice choose_ebe_layout(const Context& context, const ElementSet<T>& elements, std::size_t k);

}  // namespace ziggurat::fem
