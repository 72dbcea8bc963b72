#include "ziggurat/tuning/ebe_autotune.hpp"

#include <algorithm>
#include <optional>

#include "tuning/recorded_timings.hpp"
#include "tuning/timing.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::fem {

namespace {

// Enough elements that each colour's launch fills a GPU, as on a large model: a brick mesh has 8
// colours, and a sample of 65536 split into launches of 8192 elements left a GPU idle enough that
// atomics won the sample where colouring won the model
// (bench/results/2026-11-28-design-measurements.md).
constexpr std::size_t kSampleElements = std::size_t{1} << 19;

// The first kSampleElements elements of a larger set, with the same DOF count.
template <class T>
ElementSet<T> prefix(const ElementSet<T>& elements) {
  ElementSet<T> s;
  s.dofs = elements.dofs;
  s.element_size = elements.element_size;
  s.storage = elements.storage;
  s.matrices.assign(elements.matrices.begin(), elements.matrices.begin() + kSampleElements * elements.stored_per_element());
  s.indices.assign(elements.indices.begin(), elements.indices.begin() + kSampleElements * elements.element_size);
  return s;
}

using Seconds = std::vector<std::pair<std::string, double>>;

// Seconds per call of each candidate operation(op) that the device can run, fastest first: one
// operator per options, on the sample, with X all ones.
template <class T, class Operation>
Seconds measure(const Context& context, const ElementSet<T>& elements, std::size_t k,
                const std::vector<std::pair<std::string, EbeOptions>>& candidates, Operation operation) {
  // The set itself when it is no larger than the sample: no copy of it.
  std::optional<ElementSet<T>> owned;
  if (elements.count() > kSampleElements) owned = prefix(elements);
  const ElementSet<T>& part = owned ? *owned : elements;
  sparse::DeviceVectors<T> x(context, part.dofs, k), y(context, part.dofs, k);
  x.upload(std::vector<T>(part.dofs * k, T(1)));
  Seconds seconds;
  std::string refused;
  for (const auto& [name, options] : candidates) {
    try {
      EbeOperator<T> op(context, part, k, options);
      const auto one = [&] { operation(op, x, y); };
      seconds.emplace_back(name, ziggurat::detail::seconds_per_call(context, 3, one));
    } catch (const UnsupportedFeature& e) {
      // What the device (atomics) or the elements (columns) cannot run is not a candidate.
      refused = e.what();
    }
  }
  if (seconds.empty()) throw UnsupportedFeature(refused);
  std::sort(seconds.begin(), seconds.end(), [](const auto& p, const auto& q) { return p.second < q.second; });
  return seconds;
}


// "f64 l24 k27": precision, element size and vectors.
template <class T>
std::string problem_kind(const ElementSet<T>& elements, std::size_t k) {
  return std::string(sizeof(T) == 4 ? "f32" : "f64") + " l" + std::to_string(elements.element_size) + " k" +
         std::to_string(k);
}

}  // namespace

template <class T>
std::string ebe_problem_key(const ElementSet<T>& elements, std::size_t k) {
  return "ebe " + problem_kind(elements, k);
}

template <class T>
EbeScatterChoice choose_ebe_scatter(const Context& context, const ElementSet<T>& elements, std::size_t k) {
  EbeScatterChoice choice;
  choice.key = ebe_problem_key(elements, k);
  choice.seconds = ziggurat::detail::recorded_or_measured(
      context.device(), choice.key, [](const std::string& name) { parse_ebe_scatter(name); },
      [&] {
        return measure(context, elements, k,
                       {{to_string(EbeScatter::colouring), {EbeScatter::colouring}},
                        {to_string(EbeScatter::atomics), {EbeScatter::atomics}}},
                       [](EbeOperator<T>& op, auto& x, auto& y) { op.multiply(x, y); });
      },
      choice.measured_now);
  choice.scatter = parse_ebe_scatter(choice.seconds.front().first);
  return choice;
}

template <class T>
EbeLayoutChoice choose_ebe_layout(const Context& context, const ElementSet<T>& elements, std::size_t k) {
  EbeLayoutChoice choice;
  choice.key = "ebe projection " + problem_kind(elements, k);
  const std::size_t l = elements.element_size, group = context.device().max_work_group_size;
  // Columns are a candidate where they issue no more multiply-adds than tiles (then their lighter
  // staging may win); elsewhere tiles, without compiling or timing columns. Tensor wherever the
  // device has the tensor cores (its multiply-adds run at another rate).
  std::vector<std::pair<std::string, EbeOptions>> candidates{
      {to_string(EbeLayout::tiles), {EbeScatter::colouring, 0, EbeLayout::tiles}}};
  if (ebe_projection_steps(EbeLayout::columns, l, k, group) <= ebe_projection_steps(EbeLayout::tiles, l, k, group))
    candidates.push_back({to_string(EbeLayout::columns), {EbeScatter::colouring, 0, EbeLayout::columns}});
  std::vector<std::string> required;
  if (ebe_tensor_refusal(context.device(), sizeof(T), l, k).empty()) {
    candidates.push_back({to_string(EbeLayout::tensor), {EbeScatter::colouring, 0, EbeLayout::tensor}});
    required.push_back(to_string(EbeLayout::tensor));  // records from before the tensor layout
  }
  choice.seconds = ziggurat::detail::recorded_or_measured(
      context.device(), choice.key, [](const std::string& name) { parse_ebe_layout(name); },
      [&] { return measure(context, elements, k, candidates, [](EbeOperator<T>& op, auto& x, auto&) { op.project(x); }); },
      choice.measured_now, required);
  choice.layout = parse_ebe_layout(choice.seconds.front().first);
  return choice;
}

template std::string ebe_problem_key(const ElementSet<float>&, std::size_t);
template std::string ebe_problem_key(const ElementSet<double>&, std::size_t);
template EbeScatterChoice choose_ebe_scatter(const Context&, const ElementSet<float>&, std::size_t);
template EbeScatterChoice choose_ebe_scatter(const Context&, const ElementSet<double>&, std::size_t);
template EbeLayoutChoice choose_ebe_layout(const Context&, const ElementSet<float>&, std::size_t);
template EbeLayoutChoice choose_ebe_layout(const Context&, const ElementSet<double>&, std::size_t);

}  // namespace ziggurat::fem
