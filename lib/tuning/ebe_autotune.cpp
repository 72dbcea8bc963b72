#include "ziggurat/tuning/ebe_autotune.hpp"

#include <algorithm>

#include "tuning/timing.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::fem {

namespace {

// Enough elements that each colour's launch fills a GPU, as on a large model: a brick mesh has 8
// colours, and a sample of 65536 split into launches of 8192 elements, which left an H200 idle
// enough that atomics won the sample while colouring was 2.7x faster on 602112 bricks.
constexpr std::size_t kSampleElements = std::size_t{1} << 19;

// The first elements of the set, with the same DOF count.
template <class T>
ElementSet<T> sample(const ElementSet<T>& elements) {
  if (elements.count() <= kSampleElements) return elements;
  ElementSet<T> s;
  s.dofs = elements.dofs;
  s.element_size = elements.element_size;
  s.storage = elements.storage;
  s.matrices.assign(elements.matrices.begin(), elements.matrices.begin() + kSampleElements * elements.stored_per_element());
  s.indices.assign(elements.indices.begin(), elements.indices.begin() + kSampleElements * elements.element_size);
  return s;
}

bool names_known_scatters(const TuningRecord& record) {
  try {
    for (const auto& entry : record.seconds) parse_ebe_scatter(entry.first);
    return !record.seconds.empty();
  } catch (const InvalidArgument&) {
    return false;
  }
}

template <class T>
std::vector<std::pair<std::string, double>> measure_scatters(const Context& context, const ElementSet<T>& elements,
                                                             std::size_t k) {
  const ElementSet<T> part = sample(elements);
  sparse::DeviceVectors<T> x(context, part.dofs, k), y(context, part.dofs, k);
  x.upload(std::vector<T>(part.dofs * k, T(1)));
  std::vector<std::pair<std::string, double>> seconds;
  for (const EbeScatter scatter : {EbeScatter::colouring, EbeScatter::atomics}) {
    try {
      EbeOperator<T> op(context, part, k, {scatter, 0});
      const auto one = [&] { op.multiply(x, y); };
      seconds.emplace_back(to_string(scatter), ziggurat::detail::seconds_per_call(context, 3, one));
    } catch (const UnsupportedFeature&) {
      // Atomics the device lacks are not a candidate.
    }
  }
  std::sort(seconds.begin(), seconds.end(), [](const auto& p, const auto& q) { return p.second < q.second; });
  return seconds;
}

}  // namespace

template <class T>
std::string ebe_problem_key(const ElementSet<T>& elements, std::size_t k) {
  return "ebe " + std::string(sizeof(T) == 4 ? "f32" : "f64") + " l" + std::to_string(elements.element_size) + " k" +
         std::to_string(k);
}

template <class T>
EbeScatterChoice choose_ebe_scatter(const Context& context, const ElementSet<T>& elements, std::size_t k) {
  EbeScatterChoice choice;
  choice.key = ebe_problem_key(elements, k);
  if (auto record = load_tuning_record(context.device(), choice.key); record && names_known_scatters(*record)) {
    choice.seconds = std::move(record->seconds);
  } else {
    choice.seconds = measure_scatters(context, elements, k);
    choice.measured_now = true;
    // A record that cannot be written is measured again next time; the choice stands either way.
    store_tuning_record(context.device(), {choice.key, choice.seconds});
  }
  choice.scatter = parse_ebe_scatter(choice.seconds.front().first);
  return choice;
}

template std::string ebe_problem_key(const ElementSet<float>&, std::size_t);
template std::string ebe_problem_key(const ElementSet<double>&, std::size_t);
template EbeScatterChoice choose_ebe_scatter(const Context&, const ElementSet<float>&, std::size_t);
template EbeScatterChoice choose_ebe_scatter(const Context&, const ElementSet<double>&, std::size_t);

}  // namespace ziggurat::fem
