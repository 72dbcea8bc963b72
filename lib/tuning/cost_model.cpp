#include "ziggurat/tuning/cost_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "base/integer_math.hpp"
#include "solver/pyramid_tiling.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/grid.hpp"

namespace ziggurat::model {

namespace {

using ziggurat::detail::Cut;
using ziggurat::detail::ceil_div;

std::string text(double value) {
  std::string s = std::to_string(value);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// A task of one pass: its counts, and the last task of the previous pass whose results it reads.
struct Task {
  TaskCounts counts;
  std::size_t halo_source = 0;
};

// Values per row and interior nodes per row of a strip cut (rows are planes in 3D, nodes in 1D).
std::pair<double, double> row_sizes(const Problem& problem) {
  double values = 1, interior = 1;
  for (std::size_t axis = 0; axis + 1 < problem.extents.size(); ++axis) {
    values *= static_cast<double>(problem.extents[axis]);
    interior *= static_cast<double>(problem.extents[axis] - 2);
  }
  return {values, interior};
}

// Values of one row (plane) in a device buffer, whose rows are padded to the alignment; a 1D
// grid's "rows" are single nodes.
double padded_row_values(const Problem& problem) {
  if (problem.extents.size() == 1) return 1;
  const std::size_t align = std::max<std::size_t>(1, problem.row_alignment);
  double values = static_cast<double>(ceil_div(problem.extents[0], align) * align);
  for (std::size_t axis = 1; axis + 1 < problem.extents.size(); ++axis) values *= static_cast<double>(problem.extents[axis]);
  return values;
}

std::size_t depth_of(const DeviceConstants& k) { return std::max<std::size_t>(1, k.launch_depth); }

// Kernel launches of a pass of `steps` steps: ceil(steps / T).
double launches(const DeviceConstants& k, std::size_t steps) { return static_cast<double>(ceil_div(steps, depth_of(k))); }

// Kernel time a computed node and step in a pass of `steps` steps: tau_a in the full launches.
// A full launch's T tau_a is one crossing of device memory and T steps on chip, so the partial
// launch of r = steps mod T steps takes crossing + r (tau_a - crossing / T) a node: the crossing
// whole however few its steps. A pass's nodes of one step are taken as its computed nodes / steps.
double node_step_ns(const DeviceConstants& k, std::size_t steps) {
  const std::size_t depth = depth_of(k), partial = steps % depth;
  if (partial == 0) return k.tau_a_ns;
  const double s = static_cast<double>(steps), r = static_cast<double>(partial);
  const double on_chip = std::max(0.0, k.tau_a_ns - k.crossing_ns / static_cast<double>(depth));
  return ((s - r) * k.tau_a_ns + k.crossing_ns + r * on_chip) / s;
}

// Kernel time of `tasks` tasks of a pass of `steps` steps that compute `computed` nodes in all.
double kernels_ns(const DeviceConstants& k, std::size_t steps, double tasks, double computed) {
  return tasks * (launches(k, steps) * k.launch_ns) + computed * node_step_ns(k, steps);
}

std::vector<Task> strip_tasks(const Problem& problem, std::size_t rows, std::size_t steps) {
  const Cut cut{problem.extents.back(), rows};
  const auto [row_values, row_interior] = row_sizes(problem);
  const auto fields = static_cast<double>(problem.uploaded_fields);
  const auto task = [&](std::size_t t) {
    return Task{{cut.sent(t, steps) * row_values * fields, cut.owned(t) * row_values, cut.computed(t, steps) * row_interior, steps},
                cut.last_source(t, steps)};
  };
  std::vector<Task> tasks;
  tasks.reserve(cut.tiles());
  for (std::size_t t = 0; t < cut.tiles(); ++t) tasks.push_back(task(t));
  return tasks;
}

std::vector<Task> block_tasks(const Problem& problem, std::size_t side, std::size_t steps) {
  const Cut x{problem.extents[0], side}, y{problem.extents[1], side};
  // Computed nodes of a tile: sum over margins of width_x * width_y. Regular tiles share one
  // width profile per axis, so the sums are kept per pair of profiles.
  const auto profile_of = [&](const Cut& cut, std::size_t t) {
    return cut.regular(t, steps) ? std::size_t{0} : t + 1;
  };
  std::map<std::pair<std::size_t, std::size_t>, double> computed_by_profiles;
  const auto computed = [&](std::size_t tx, std::size_t ty) {
    const auto key = std::pair{profile_of(x, tx), profile_of(y, ty)};
    const auto found = computed_by_profiles.find(key);
    if (found != computed_by_profiles.end()) return found->second;
    double sum = 0;
    for (std::size_t m = 0; m < steps; ++m) sum += x.width(tx, m, 1, x.length - 1) * y.width(ty, m, 1, y.length - 1);
    return computed_by_profiles[key] = sum;
  };
  const auto task = [&](std::size_t tx, std::size_t ty) {
    return Task{{x.sent(tx, steps) * y.sent(ty, steps) * static_cast<double>(problem.uploaded_fields), x.owned(tx) * y.owned(ty), computed(tx, ty), steps},
                y.last_source(ty, steps) * x.tiles() + x.last_source(tx, steps)};
  };
  std::vector<Task> tasks;
  tasks.reserve(x.tiles() * y.tiles());
  for (std::size_t ty = 0; ty < y.tiles(); ++ty) {
    for (std::size_t tx = 0; tx < x.tiles(); ++tx) tasks.push_back(task(tx, ty));
  }
  return tasks;
}

// The tasks of one pass.
std::vector<Task> tasks_of(const Problem& problem, const PyramidLayout& layout, std::size_t steps) {
  return layout.decomposition == Decomposition::block ? block_tasks(problem, layout.task_extent, steps)
                                                     : strip_tasks(problem, layout.task_extent, steps);
}

// Engine times of one pass (all tasks), and of its first and last tasks, under given constants.
struct PassCosts {
  double up = 0, down = 0, compute = 0;
  double computed = 0;                         // nodes computed, all tasks and steps
  double fill = 0, drain = 0;                  // the first task's upload, the last task's download
  double first_kernels = 0, last_kernels = 0;  // at least: launches, and each owned node once a step
};

// The pass costs of one task extent, for passes of 1, 2, ... steps, built as they are asked for
// (each in O(1): the computed nodes accumulate over the margin, the rest are closed forms).
class ExtentCosts {
 public:
  ExtentCosts(const Problem& problem, Decomposition decomposition, std::size_t extent, const DeviceConstants& k)
      : block_(decomposition == Decomposition::block),
        slow_{problem.extents.back(), extent},
        fast_{problem.extents[0], extent},
        up_(block_ ? k.rect_upload : k.upload),
        down_(block_ ? k.rect_download : k.download),
        k_(k),
        costs_(1) {
    std::tie(row_values_, row_interior_) = row_sizes(problem);
    fields_ = static_cast<double>(problem.uploaded_fields);
    padded_row_values_ = padded_row_values(problem);
    align_ = std::max<std::size_t>(1, problem.row_alignment);
    tasks_ = static_cast<double>(block_ ? fast_.tiles() * slow_.tiles() : slow_.tiles());
  }

  const PassCosts& pass(std::size_t steps) {
    while (costs_.size() <= steps) extend();
    return costs_[steps];
  }
  double tasks() const { return tasks_; }
  // Values a task buffer must hold for passes of `steps` steps: the largest region sent.
  double buffer_values(std::size_t steps) const {
    if (!block_) return slow_.max_sent(steps) * padded_row_values_;
    const auto width = static_cast<std::size_t>(fast_.max_sent(steps));
    return static_cast<double>(ceil_div(width, align_) * align_) * slow_.max_sent(steps);
  }
  // The same as rows (strips) or as the longer side of the region (blocks).
  std::size_t buffer_extent(std::size_t steps) const {
    return static_cast<std::size_t>(block_ ? std::max(fast_.max_sent(steps), slow_.max_sent(steps)) : slow_.max_sent(steps));
  }

 private:
  void extend() {
    const std::size_t steps = costs_.size(), m = steps - 1;  // a pass of `steps` steps adds margin m
    computed_ += block_ ? fast_.total_computed_at(m) * slow_.total_computed_at(m) : slow_.total_computed_at(m) * row_interior_;
    double sent, received, first_sent, first_owned, last_owned, last_received;
    if (block_) {
      sent = fast_.total_sent(steps) * slow_.total_sent(steps) * fields_;
      received = static_cast<double>((fast_.length - 2) * (slow_.length - 2));
      first_sent = fast_.sent(0, steps) * slow_.sent(0, steps) * fields_;
      first_owned = fast_.owned(0) * slow_.owned(0);
      last_owned = last_received = fast_.owned(fast_.tiles() - 1) * slow_.owned(slow_.tiles() - 1);
    } else {
      sent = slow_.total_sent(steps) * row_values_ * fields_;
      received = static_cast<double>(slow_.length - 2) * row_values_;
      first_sent = slow_.sent(0, steps) * row_values_ * fields_;
      first_owned = slow_.owned(0) * row_interior_;
      last_owned = slow_.owned(slow_.tiles() - 1) * row_interior_;
      last_received = slow_.owned(slow_.tiles() - 1) * row_values_;
    }
    PassCosts c;
    c.up = tasks_ * up_.latency_ns + sent * up_.ns_per_value;
    c.down = tasks_ * down_.latency_ns + received * down_.ns_per_value;
    c.compute = kernels_ns(k_, steps, tasks_, computed_);
    c.computed = computed_;
    c.fill = up_.time_ns(first_sent);
    c.drain = down_.time_ns(last_received);
    c.first_kernels = kernels_ns(k_, steps, 1, static_cast<double>(steps) * first_owned);
    c.last_kernels = kernels_ns(k_, steps, 1, static_cast<double>(steps) * last_owned);
    costs_.push_back(c);
  }

  bool block_;
  Cut slow_, fast_;  // the cut axis, and (blocks) the other one
  TransferCost up_, down_;
  const DeviceConstants& k_;
  double row_values_ = 1, row_interior_ = 1, padded_row_values_ = 1, fields_ = 1, tasks_ = 0, computed_ = 0;
  std::size_t align_ = 1;
  std::vector<PassCosts> costs_;  // costs_[s]: a pass of s steps (costs_[0] unused)
};

const TransferEngines& engines_of(const DeviceConstants& k, Decomposition cut) {
  return cut == Decomposition::block ? k.rect_engines : k.engines;
}

// The constants a schedule runs at: in the overlapped one, transfers share the machine with the
// other engines and take longer (unless nothing overlaps, which makes it serial).
DeviceConstants as_scheduled(const DeviceConstants& k, Schedule schedule) {
  if (schedule == Schedule::serial) return k;
  DeviceConstants scheduled = k;
  const auto slow = [](TransferCost& cost, const TransferEngines& engines, double slowdown) {
    if (!engines.overlap_compute) return;
    cost.latency_ns *= slowdown;
    cost.ns_per_value *= slowdown;
  };
  slow(scheduled.upload, k.engines, k.engines.upload_slowdown);
  slow(scheduled.download, k.engines, k.engines.download_slowdown);
  slow(scheduled.rect_upload, k.rect_engines, k.rect_engines.upload_slowdown);
  slow(scheduled.rect_download, k.rect_engines, k.rect_engines.download_slowdown);
  return scheduled;
}

// Per-task engine times.
struct Times {
  double up, compute, down;
};

// The engine times of a pass's tasks in the overlapped schedule. A task's kernels run while the
// next task uploads and the previous one downloads; for that long they run `compute_slowdown`
// times slower (the engines share device memory and the bus).
std::vector<Times> task_times(const std::vector<Task>& tasks, const TransferCost& up, const TransferCost& down,
                              const DeviceConstants& k, double compute_slowdown) {
  std::vector<Times> times;
  times.reserve(tasks.size());
  for (const auto& task : tasks) {
    const TaskCounts& c = task.counts;
    times.push_back({up.time_ns(c.sent), kernels_ns(k, c.steps, 1, c.computed), down.time_ns(c.received)});
  }
  for (std::size_t j = 0; j < times.size(); ++j) {
    const double next_up = j + 1 < times.size() ? times[j + 1].up : 0, previous_down = j > 0 ? times[j - 1].down : 0;
    times[j].compute += (compute_slowdown - 1) * std::min(times[j].compute, std::max(next_up, previous_down));
  }
  return times;
}

// The overlapped schedule (see predict() in cost_model.hpp) over all passes; returns the makespan.
// Times are kept for the last three passes (a task depends on the two tasks before it and on the
// previous pass's downloads). The schedule is max-plus linear and every full pass is the same, so
// once a pass leaves the state shifted uniformly by some lambda, every later full pass shifts it
// by lambda again: those passes are skipped exactly, and only the last one is simulated.
class OverlappedSchedule {
 public:
  OverlappedSchedule(const std::vector<Task>& full, const std::vector<Times>& full_times, const std::vector<Task>& last,
                     const std::vector<Times>& last_times, bool duplex)
      : full_(full), full_times_(full_times), last_(last), last_times_(last_times), duplex_(duplex), tasks_(full.size()) {
    for (auto& slot : compute_) slot.assign(tasks_, 0);
    for (auto& slot : down_) slot.assign(tasks_, 0);
  }

  double makespan(std::size_t passes) {
    passes_ = passes;
    std::vector<double> before;
    for (pass_ = 0; pass_ < passes_; ++pass_) {
      for (std::size_t i = 0; i < tasks_; ++i) run(i);
      const std::size_t full_passes_left = pass_ + 2 < passes_ ? passes_ - pass_ - 2 : 0;
      if (full_passes_left == 0 || pass_ == 0) continue;
      std::vector<double> state = snapshot();
      if (const auto lambda = uniform_shift(before, state)) {
        jump(full_passes_left, *lambda);
        before.clear();
      } else {
        before = std::move(state);
      }
    }
    download_until(passes_ * tasks_ - 1);
    return down_end(passes_ * tasks_ - 1);
  }

 private:
  // Tasks are numbered across passes: task g is task g mod T of pass g / T.
  const Times& times(std::size_t g) const {
    return g / tasks_ + 1 == passes_ ? last_times_[g % tasks_] : full_times_[g % tasks_];
  }
  double& compute_end(std::size_t g) { return compute_[(g / tasks_) % 3][g % tasks_]; }
  double& down_end(std::size_t g) { return down_[(g / tasks_) % 3][g % tasks_]; }
  double& down_free() { return duplex_ ? down_free_ : up_free_; }  // one copy engine without duplex

  void download_until(std::size_t g) {  // downloads go in order
    for (; next_download_ <= g; ++next_download_) {
      const double start = std::max(compute_end(next_download_), down_free());
      down_end(next_download_) = down_free() = start + times(next_download_).down;
    }
  }

  void run(std::size_t i) {
    const std::size_t g = pass_ * tasks_ + i;
    double ready = g >= 2 ? compute_end(g - 2) : 0;  // the slot's free layer: task g-2 is done with it
    if (pass_ > 0) {
      const std::size_t source = (pass_ - 1) * tasks_ + (pass_ + 1 == passes_ ? last_ : full_)[i].halo_source;
      download_until(source);
      ready = std::max(ready, down_end(source));
    }
    const double up_end = std::max(ready, up_free_) + times(g).up;
    up_free_ = up_end;
    if (g >= 1) download_until(g - 1);
    const double start = std::max({up_end, compute_free_, g >= 2 ? down_end(g - 2) : 0.0});
    compute_end(g) = compute_free_ = start + times(g).compute;
  }

  // What the next pass depends on: the engines and the times of this pass and the one before
  // (this pass's last download is still to come).
  std::vector<double> snapshot() {
    std::vector<double> state = {up_free_, compute_free_, down_free_};
    for (const std::size_t pass : {pass_ - 1, pass_}) {
      state.insert(state.end(), compute_[pass % 3].begin(), compute_[pass % 3].end());
      state.insert(state.end(), down_[pass % 3].begin(), down_[pass % 3].end() - (pass == pass_ ? 1 : 0));
    }
    return state;
  }

  static std::optional<double> uniform_shift(const std::vector<double>& before, const std::vector<double>& after) {
    if (before.size() != after.size()) return std::nullopt;
    const double lambda = after.front() - before.front();
    const double tolerance = 1e-12 * std::abs(after.front()) + 1e-9;
    for (std::size_t k = 0; k < after.size(); ++k) {
      if (std::abs(after[k] - before[k] - lambda) > tolerance) return std::nullopt;
    }
    return lambda;
  }

  // Skips `passes` passes that each shift everything by `lambda`.
  void jump(std::size_t passes, double lambda) {
    const double by = static_cast<double>(passes) * lambda;
    up_free_ += by;
    compute_free_ += by;
    down_free_ += by;
    for (auto* slots : {&compute_, &down_}) {
      for (auto& slot : *slots) {
        for (auto& t : slot) t += by;
      }
      std::array<std::vector<double>, 3> moved;
      for (std::size_t q = 0; q < 3; ++q) moved[(q + passes) % 3] = std::move((*slots)[q]);
      *slots = std::move(moved);
    }
    pass_ += passes;
    next_download_ += passes * tasks_;
  }

  const std::vector<Task>& full_;
  const std::vector<Times>& full_times_;
  const std::vector<Task>& last_;
  const std::vector<Times>& last_times_;
  bool duplex_;
  std::size_t tasks_, passes_ = 0, pass_ = 0, next_download_ = 0;
  double up_free_ = 0, compute_free_ = 0, down_free_ = 0;
  std::array<std::vector<double>, 3> compute_, down_;  // per task, for the passes p with p mod 3 = slot
};

double tau_c_mean(const TransferCost& up, const TransferCost& down) { return 0.5 * (up.ns_per_value + down.ns_per_value); }

std::string bytes_text(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  if (bytes < (1u << 20)) return text(std::round(static_cast<double>(bytes) / 1024 * 100) / 100) + " KiB";
  return text(std::round(static_cast<double>(bytes) / (1 << 20) * 100) / 100) + " MiB";
}

}  // namespace

DeviceConstants DeviceConstants::paper(double tau_c_ns, double tau_a_ns) {
  DeviceConstants k;
  k.upload = k.download = k.rect_upload = k.rect_download = TransferCost{0, tau_c_ns};
  k.tau_a_ns = tau_a_ns;
  return k;
}

void DeviceConstants::set_tau_c(double tau_c_ns) {
  for (TransferCost* cost : {&upload, &download, &rect_upload, &rect_download}) cost->ns_per_value = tau_c_ns;
}

void DeviceConstants::validate() const {
  const auto check = [](const char* name, double ns) {
    if (!(ns >= 0 && ns <= kMostNs))
      throw InvalidArgument(std::string("the model constant ") + name + " = " + std::to_string(ns) +
                            " ns is not a time a device takes: it must be from 0 to 3.6e12 ns (an hour)");
  };
  for (const auto& [name, cost] : {std::pair{"upload", &upload}, {"download", &download},
                                   {"rect_upload", &rect_upload}, {"rect_download", &rect_download}}) {
    check((std::string(name) + ".latency_ns").c_str(), cost->latency_ns);
    check((std::string(name) + ".ns_per_value").c_str(), cost->ns_per_value);
  }
  check("tau_a_ns", tau_a_ns);
  if (!(tau_a_ns > 0)) throw InvalidArgument("the model constant tau_a_ns must be above 0: a node takes time to compute");
  check("launch_ns", launch_ns);
  check("crossing_ns", crossing_ns);
  for (const TransferEngines* e : {&engines, &rect_engines}) {
    for (const double slowdown : {e->upload_slowdown, e->download_slowdown, e->compute_slowdown}) {
      if (!(slowdown >= 1 && std::isfinite(slowdown)))
        throw InvalidArgument("a slowdown of the model constants is " + std::to_string(slowdown) +
                              ": it must be a finite factor of 1 or more");
    }
  }
}

void Problem::validate() const {
  if (extents.empty() || extents.size() > 3) {
    throw InvalidArgument("the model takes 1D, 2D or 3D grids, got " + std::to_string(extents.size()) + " extents");
  }
  for (const std::size_t extent : extents) {
    if (extent < 3) {
      throw InvalidArgument("grid " + extents_string(extents) + " needs at least 3 nodes on every axis "
                            "(an interior node between two boundary nodes)");
    }
  }
  checked_node_count(extents);
  if (steps == 0) throw InvalidArgument("the model needs at least one time step");
  if (uploaded_fields < 1) throw InvalidArgument("a task uploads at least its grid: uploaded_fields must be 1 or more");
  if (value_bytes != 4 && value_bytes != 8) {
    throw InvalidArgument("grid values are 4 (float) or 8 (double) bytes, got " + std::to_string(value_bytes));
  }
}

double Problem::interior_nodes() const {
  double nodes = 1;
  for (const std::size_t extent : extents) nodes *= static_cast<double>(extent - 2);
  return nodes;
}

std::vector<TaskCounts> pass_counts(const Problem& problem, const PyramidLayout& layout, std::size_t pass_steps) {
  problem.validate();
  validate(layout, problem.extents, problem.steps);
  if (layout.decomposition == Decomposition::incore) {
    double values = 1;
    for (const std::size_t extent : problem.extents) values *= static_cast<double>(extent);
    return {TaskCounts{values * static_cast<double>(problem.uploaded_fields), values,
                       problem.interior_nodes() * static_cast<double>(pass_steps), pass_steps}};
  }
  std::vector<TaskCounts> counts;
  for (const auto& task : tasks_of(problem, layout, pass_steps)) counts.push_back(task.counts);
  return counts;
}

Budget paper_budget(std::uint64_t bytes, Schedule schedule) {
  return {bytes, schedule == Schedule::serial ? 1 : solver_buffer_layers(schedule)};
}

namespace {

// Grid values one buffer layer may hold under the budget.
double capacity_values(const Problem& problem, const Budget& budget) {
  if (budget.layers == 0) throw InvalidArgument("a budget is shared by at least one buffer layer, not 0");
  return std::floor(static_cast<double>(budget.bytes) / static_cast<double>(problem.value_bytes * budget.layers));
}

Decomposition cut_of(const PyramidLayout& layout) {
  return layout.decomposition == Decomposition::block ? Decomposition::block : Decomposition::strip;
}

std::size_t height_of(const PyramidLayout& layout) {
  return layout.decomposition == Decomposition::trivial ? 1 : layout.height;
}

// Values of the whole grid in one device buffer (rows padded).
double incore_values(const Problem& problem) {
  return padded_row_values(problem) * static_cast<double>(problem.extents.back());
}

// No task needs to own more than the interior of the axes it cuts.
std::size_t widest_task(const Problem& problem, Decomposition cut) {
  return cut == Decomposition::block ? std::max(problem.extents[0], problem.extents[1]) - 2 : problem.extents.back() - 2;
}

}  // namespace

std::size_t max_strip_rows(const Problem& problem, const Budget& budget) {
  problem.validate();
  const double rows = std::floor(capacity_values(problem, budget) / padded_row_values(problem));
  return static_cast<std::size_t>(std::min(rows, static_cast<double>(problem.extents.back())));
}

std::size_t max_block_side(const Problem& problem, const Budget& budget) {
  problem.validate();
  if (problem.extents.size() != 2) return 0;
  const double side = std::floor(std::sqrt(capacity_values(problem, budget)));
  return static_cast<std::size_t>(std::min(side, static_cast<double>(std::max(problem.extents[0], problem.extents[1]))));
}

bool fits_incore(const Problem& problem, std::uint64_t budget_bytes) {
  problem.validate();
  return static_cast<double>(1 + problem.uploaded_fields) * incore_values(problem) * static_cast<double>(problem.value_bytes) <=
         static_cast<double>(budget_bytes);
}

double task_buffer_values(const Problem& problem, const PyramidLayout& layout) {
  problem.validate();
  validate(layout, problem.extents, problem.steps);
  if (layout.decomposition == Decomposition::incore) return incore_values(problem);
  const DeviceConstants none;
  return ExtentCosts(problem, cut_of(layout), layout.task_extent, none).buffer_values(height_of(layout));
}

std::uint64_t minimum_budget(const Problem& problem, Decomposition decomposition, std::size_t height, std::size_t layers) {
  const PyramidLayout smallest{decomposition, height, 1};
  return static_cast<std::uint64_t>(task_buffer_values(problem, smallest)) * problem.value_bytes * layers;
}

bool fits(const Problem& problem, const PyramidLayout& layout, const Budget& budget) {
  if (layout.decomposition == Decomposition::incore) return fits_incore(problem, budget.bytes);
  return task_buffer_values(problem, layout) <= capacity_values(problem, budget);
}

namespace {

double per_node_and_step(const Problem& problem, double total_ns) {
  return total_ns / (problem.interior_nodes() * static_cast<double>(problem.steps));
}

// What the pass totals of a layout say, in O(1): the exact time of the serial schedule, or for
// the overlapped one a lower bound. Each engine works through its commands in order, so the run
// lasts at least as long as all kernels plus the first upload and the last download, all uploads
// plus the last task's kernels and download, and all downloads plus the first task's upload and
// kernels (uploads and downloads together without duplex); a task's kernels take at least its
// launches and one computation of each node it owns per step.
struct Estimate {
  PyramidLayout layout;
  Prediction prediction;  // total_ns is exact, or a lower bound; compute_ns is exact
  bool exact = false;
  // A lower bound on compute_ns that never falls as n grows (compute_ns itself may: a pass that is
  // no multiple of T pays a partial launch): every computed node and step at tau_a, and the fewest
  // launches, ceil(K/T) a task.
  double kernel_bound_ns = 0;
};

Estimate estimate(const Problem& problem, const PyramidLayout& layout, const DeviceConstants& k, Schedule schedule,
                  ExtentCosts& costs) {
  Estimate e;
  e.layout = layout;
  Prediction& p = e.prediction;
  const std::size_t n = height_of(layout);
  p.passes = ceil_div(problem.steps, n);
  const std::size_t last_steps = problem.steps - n * (p.passes - 1);
  const PassCosts full = costs.pass(n);
  const PassCosts last = costs.pass(last_steps);
  const double before_last = static_cast<double>(p.passes - 1);
  const double up = before_last * full.up + last.up, down = before_last * full.down + last.down;
  p.compute_ns = before_last * full.compute + last.compute;
  e.kernel_bound_ns = costs.tasks() * (launches(k, problem.steps) * k.launch_ns) +
                      (before_last * full.computed + last.computed) * k.tau_a_ns;
  p.transfer_ns = up + down;
  p.tasks = static_cast<std::size_t>(costs.tasks());
  const TransferEngines& engines = engines_of(k, cut_of(layout));
  e.exact = schedule == Schedule::serial || !engines.overlap_compute;
  if (e.exact) {
    p.total_ns = p.transfer_ns + p.compute_ns;
  } else {
    const PassCosts& first = p.passes == 1 ? last : full;
    p.total_ns = std::max({p.compute_ns + first.fill + last.drain,
                           engines.duplex ? up + last.last_kernels + last.drain : up + down,
                           down + first.fill + first.first_kernels});
  }
  p.ns_per_node = per_node_and_step(problem, p.total_ns);
  return e;
}

// The exact prediction of an estimate: the overlapped schedule simulated task by task.
Prediction exact_prediction(const Problem& problem, const Estimate& e, const DeviceConstants& k) {
  if (e.exact) return e.prediction;
  Prediction p = e.prediction;
  const std::size_t n = height_of(e.layout);
  const std::size_t last_steps = problem.steps - n * (p.passes - 1);
  const bool block = cut_of(e.layout) == Decomposition::block;
  const TransferCost& up = block ? k.rect_upload : k.upload;
  const TransferCost& down = block ? k.rect_download : k.download;
  const PyramidLayout exact{cut_of(e.layout), n, e.layout.task_extent};
  const auto full_tasks = tasks_of(problem, exact, n);
  const auto last_tasks = last_steps == n ? full_tasks : tasks_of(problem, exact, last_steps);
  const TransferEngines& engines = engines_of(k, cut_of(e.layout));
  const auto full_times = task_times(full_tasks, up, down, k, engines.compute_slowdown);
  const auto last_times = last_steps == n ? full_times : task_times(last_tasks, up, down, k, engines.compute_slowdown);
  p.total_ns = OverlappedSchedule(full_tasks, full_times, last_tasks, last_times, engines.duplex).makespan(p.passes);
  p.ns_per_node = per_node_and_step(problem, p.total_ns);
  return p;
}

Prediction incore_prediction(const Problem& problem, const DeviceConstants& k) {
  Prediction p;
  const TaskCounts all = pass_counts(problem, PyramidLayout{Decomposition::incore, 0, 0}, problem.steps).front();
  p.transfer_ns = k.upload.time_ns(all.sent) + k.download.time_ns(all.received);
  p.compute_ns = kernels_ns(k, problem.steps, 1, all.computed);
  p.total_ns = p.transfer_ns + p.compute_ns;
  p.tasks = p.passes = 1;
  p.ns_per_node = per_node_and_step(problem, p.total_ns);
  return p;
}

}  // namespace

Prediction predict(const Problem& problem, const PyramidLayout& layout, const DeviceConstants& constants, Schedule schedule) {
  problem.validate();
  constants.validate();
  validate(layout, problem.extents, problem.steps);
  if (layout.decomposition == Decomposition::incore) return incore_prediction(problem, constants);
  const DeviceConstants k = as_scheduled(constants, schedule);
  ExtentCosts costs(problem, cut_of(layout), layout.task_extent, k);
  return exact_prediction(problem, estimate(problem, layout, k, schedule, costs), k);
}

double strip_ns_per_node_approx(double R, double n, double tau_c, double tau_a) {
  return (R - n) / (R - 2 * n) * (2 * tau_c / n + tau_a);
}

double block_ns_per_node_approx(double B, double n, double tau_c, double tau_a) {
  const double inner = (B - n) * (B - n);
  return (2 * (inner + n * n) * tau_c / n + (inner + n * n / 3) * tau_a) / ((B - 2 * n) * (B - 2 * n));
}

double trivial_ns_per_node_approx(double R, double tau_c, double tau_a) {
  return 2 * (R - 1) / (R - 2) * tau_c + tau_a;
}

TaskCounts paper_strip_counts(double R, double n, double interior_per_row) {
  return {R * interior_per_row, (R - 2 * n) * interior_per_row, n * (R - n - 1) * interior_per_row,
          static_cast<std::size_t>(n)};
}

TaskCounts paper_block_counts(double B, double n) {
  return {B * B, (B - 2 * n) * (B - 2 * n), n * ((B - n) * (B - n) - 2 * (B - n) + (n * n + 2) / 3),
          static_cast<std::size_t>(n)};
}

namespace {

// The largest task extent whose buffer for passes of n steps fits, or 0 (binary search: a larger
// task never needs a smaller buffer).
std::size_t largest_fitting_extent(const Problem& problem, Decomposition cut, std::size_t n, double capacity) {
  const DeviceConstants none;
  const auto fits_extent = [&](std::size_t extent) {
    return ExtentCosts(problem, cut, extent, none).buffer_values(n) <= capacity;
  };
  std::size_t low = 0, high = widest_task(problem, cut);
  if (fits_extent(high)) return high;
  while (high - low > 1) {
    const std::size_t mid = (low + high) / 2;
    (mid > 0 && fits_extent(mid) ? low : high) = mid;
  }
  return low;
}

}  // namespace

Plan best_plan(const Problem& problem, const Budget& budget, const DeviceConstants& constants, Schedule schedule,
               Decomposition choice, std::optional<std::size_t> height) {
  problem.validate();
  constants.validate();
  const DeviceConstants k = as_scheduled(constants, schedule);
  if (choice == Decomposition::incore) {
    if (!fits_incore(problem, budget.bytes)) {
      throw InvalidArgument("grid " + extents_string(problem.extents) + " does not fit in " + bytes_text(budget.bytes) +
                            " of device memory (two time layers and the inputs needed)");
    }
    Plan plan;
    plan.layout = {Decomposition::incore, 0, 0};
    plan.prediction = predict(problem, plan.layout, constants, schedule);
    plan.trivial = plan.prediction;
    return plan;
  }
  const bool block = choice == Decomposition::block;
  if (block && problem.extents.size() != 2) {
    throw InvalidArgument("block decomposition is for 2D grids; a " + std::to_string(problem.extents.size()) +
                          "D grid is cut into strips");
  }
  const Decomposition kind = block ? Decomposition::block : Decomposition::strip;
  const double capacity = capacity_values(problem, budget);
  const std::size_t n_first = height ? *height : 1, n_last = height ? *height : problem.steps;
  if (height && (*height < 1 || *height > problem.steps)) {
    throw InvalidArgument("pyramid height n = " + std::to_string(*height) + " must be between 1 and the " +
                          std::to_string(problem.steps) + " steps");
  }
  if (largest_fitting_extent(problem, kind, n_first, capacity) == 0) {
    throw InvalidArgument(std::string("a ") + bytes_text(budget.bytes) + " device-memory budget is too small for " +
                          to_string(kind) + " pyramid passes of n = " + std::to_string(n_first) + " on grid " +
                          extents_string(problem.extents) + " in the " + to_string(schedule) +
                          " schedule: the smallest task (one owned " + (block ? "node a side" : "row") +
                          " and n halo a side, " + std::to_string(budget.layers) + " buffers) needs at least " +
                          bytes_text(minimum_budget(problem, kind, n_first, budget.layers)) +
                          "; give more memory, a lower height, or a smaller grid");
  }
  // Branch and bound over every task size and every height. Heights at each task size stop where
  // the buffer no longer fits, and where a bound on the kernels alone (kernel_bound_ns) exceeds
  // the best plan found: both only grow with n (for a fixed task size, taller pyramids compute
  // every node at least as often, since their passes majorise the shorter ones'). A task that is
  // the whole axis needs only n = K: its passes run one after another, each a round trip of the
  // grid, and a pass's launches cost a crossing a node each and its steps on chip (node_step_ns),
  // so one pass, the fewest launches, is the fastest. Serial estimates are exact;
  // overlapped ones are lower bounds, and the candidates that could still win are simulated,
  // lowest bound first. A few plans simulated at the start set a first bound.
  Prediction best;
  best.total_ns = std::numeric_limits<double>::infinity();
  PyramidLayout best_layout{kind, 0, 0};
  const auto take = [&](const Estimate& e) {
    if (e.prediction.total_ns >= best.total_ns) return;
    const Prediction p = exact_prediction(problem, e, k);
    if (p.total_ns < best.total_ns) {
      best = p;
      best_layout = e.layout;
    }
  };
  for (std::size_t n = n_first; n <= n_last; n = n < n_last && 2 * n > n_last ? n_last : 2 * n) {
    if (const std::size_t extent = largest_fitting_extent(problem, kind, n, capacity); extent > 0) {
      ExtentCosts costs(problem, kind, extent, k);
      take(estimate(problem, PyramidLayout{kind, n, extent}, k, schedule, costs));
    }
    if (n == n_last) break;
  }
  struct Hopeful {
    std::size_t n, extent;
    double bound;
  };
  std::vector<Hopeful> hopeful;
  for (std::size_t extent = widest_task(problem, kind); extent >= 1; --extent) {
    ExtentCosts costs(problem, kind, extent, k);
    const bool one_pass = costs.tasks() == 1 && !height;
    for (std::size_t n = one_pass ? n_last : n_first; n <= n_last; ++n) {
      if (costs.buffer_values(n) > capacity) break;
      const Estimate e = estimate(problem, PyramidLayout{kind, n, extent}, k, schedule, costs);
      if (e.kernel_bound_ns >= best.total_ns) break;
      if (e.exact) {
        take(e);
      } else if (e.prediction.total_ns < best.total_ns) {
        hopeful.push_back({n, extent, e.prediction.total_ns});
      }
    }
  }
  std::sort(hopeful.begin(), hopeful.end(), [](const Hopeful& a, const Hopeful& b) { return a.bound < b.bound; });
  for (const Hopeful& h : hopeful) {
    if (h.bound >= best.total_ns) break;
    ExtentCosts costs(problem, kind, h.extent, k);
    take(estimate(problem, PyramidLayout{kind, h.n, h.extent}, k, schedule, costs));
  }

  Plan plan;
  plan.layout = best_layout;
  plan.buffer_extent = ExtentCosts(problem, kind, best_layout.task_extent, k).buffer_extent(best_layout.height);
  plan.prediction = best;
  plan.trivial = predict(problem, PyramidLayout{kind, 1, largest_fitting_extent(problem, kind, 1, capacity)}, constants, schedule);
  const double R = static_cast<double>(plan.buffer_extent), n = static_cast<double>(best_layout.height);
  if (R > 2 * n) {
    plan.approx_ns_per_node = block ? block_ns_per_node_approx(R, n, tau_c_mean(k.rect_upload, k.rect_download), k.tau_a_ns)
                                    : strip_ns_per_node_approx(R, n, tau_c_mean(k.upload, k.download), k.tau_a_ns);
  }
  return plan;
}

Plan best_plan_auto(const Problem& problem, const Budget& budget, const DeviceConstants& k, Schedule schedule,
                    std::optional<std::size_t> height) {
  problem.validate();
  // A grid that fits stays on the device: one upload, one download, no recomputation.
  if (fits_incore(problem, budget.bytes) && !height) return best_plan(problem, budget, k, schedule, Decomposition::incore);
  std::vector<Plan> plans;
  std::string problems;
  for (const Decomposition choice : {Decomposition::strip, Decomposition::block}) {
    if (choice == Decomposition::block && problem.extents.size() != 2) continue;
    try {
      plans.push_back(best_plan(problem, budget, k, schedule, choice, height));
    } catch (const InvalidArgument& error) {
      problems += std::string(problems.empty() ? "" : "; ") + error.what();
    }
  }
  if (plans.empty()) throw InvalidArgument(problems);
  return *std::min_element(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
    return a.prediction.total_ns < b.prediction.total_ns;
  });
}

double long_vector_ns(std::size_t interior_per_side, std::size_t steps, const LongVectorConstants& c) {
  if (c.numstreams < 1) throw InvalidArgument("numstreams must be at least 1");
  const double n = static_cast<double>(interior_per_side);
  const auto waves = [&](double length) { return std::ceil(length / c.numstreams); };
  const double per_step = 4 * c.t_kernel_ns + c.t_add_ns * waves((n + 2) * (n + 2) - 1) +
                          c.t_add_ns * waves(n * (n + 2) - 2) + c.t0_ns + c.t_saxpy_ns * waves(n * (n + 2) - 2);
  return c.transfer_ns + static_cast<double>(steps) * per_step;
}

double jacobi_pyramid_ns(std::size_t n, std::size_t planes, std::size_t R, std::size_t h, double tau_c, double tau_a,
                         double threads) {
  if (n < 3 || planes < 3) throw InvalidArgument("the Jacobi model needs at least 3 nodes per side and 3 planes");
  if (h < 1 || R < 2 * h + 1) {
    throw InvalidArgument("a block of R = " + std::to_string(R) + " planes cannot hold h = " + std::to_string(h) +
                          " halo planes a side and one owned plane");
  }
  if (threads <= 0) throw InvalidArgument("the Jacobi model needs a positive number of threads");
  const double N = static_cast<double>(n), r = static_cast<double>(R), halo = static_cast<double>(h);
  const double blocks = std::ceil(static_cast<double>(planes - 2) / static_cast<double>(R - 2 * h));
  return blocks * ((3 * r - 2 * halo) * N * N * tau_c + halo * (r - halo - 1) * (N - 2) * (N - 2) * tau_a / threads);
}

std::size_t best_jacobi_halo(std::size_t n, std::size_t planes, std::size_t R, double tau_c, double tau_a,
                             double threads) {
  if (R < 3) {
    throw InvalidArgument("a block of R = " + std::to_string(R) + " planes holds no halo: the budget must hold at least 3 "
                          "planes (give more memory or a smaller grid)");
  }
  constexpr std::size_t kMostHalos = 100000000;
  if ((R - 1) / 2 > kMostHalos) {
    throw InvalidArgument("blocks of " + std::to_string(R) + " planes allow " + std::to_string((R - 1) / 2) +
                          " halo heights, too many to try one by one: give fewer planes or less memory");
  }
  // Each outer iteration makes h sweeps, so the time that counts is per sweep.
  std::size_t best = 1;
  double best_time = std::numeric_limits<double>::infinity();
  for (std::size_t h = 1; 2 * h + 1 <= R; ++h) {
    const double per_sweep = jacobi_pyramid_ns(n, planes, R, h, tau_c, tau_a, threads) / static_cast<double>(h);
    if (per_sweep < best_time) {
      best_time = per_sweep;
      best = h;
    }
  }
  return best;
}

}  // namespace ziggurat::model
