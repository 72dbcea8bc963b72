#include "ziggurat/model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "ziggurat/error.hpp"
#include "ziggurat/grid.hpp"

namespace ziggurat::model {

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

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

// Sum over k = 0 .. count-1 of min(a + k, cap): the first terms grow, the rest are capped.
double capped_rising_sum(double a, double cap, double count) {
  const double rising = std::clamp(cap - a + 1, 0.0, count);
  return rising * a + rising * (rising - 1) / 2 + (count - rising) * cap;
}

// Sum over k = 0 .. count-1 of max(a - k, floor).
double floored_falling_sum(double a, double floor, double count) {
  const double falling = std::clamp(a - floor + 1, 0.0, count);
  return falling * a - falling * (falling - 1) / 2 + (count - falling) * floor;
}

// One axis of `length` nodes whose interior (1 .. length-2) is cut into tiles of `tile` nodes.
// A tile's extent grown by m a side is clipped to [lo, hi): to the grid (0, length) for what is
// sent, to the interior (1, length-1) for what is computed. Sums over tiles are closed forms.
struct Cut {
  std::size_t length;
  std::size_t tile;

  std::size_t tiles() const { return ceil_div(length - 2, tile); }
  std::size_t begin(std::size_t t) const { return 1 + t * tile; }
  std::size_t end(std::size_t t) const { return std::min(begin(t) + tile, length - 1); }
  double width(std::size_t t, std::size_t m, std::size_t lo, std::size_t hi) const {
    return static_cast<double>(std::min(end(t) + m, hi) - std::max(begin(t) > m ? begin(t) - m : 0, lo));
  }
  double sent(std::size_t t, std::size_t halo) const { return width(t, halo, 0, length); }
  double owned(std::size_t t) const { return static_cast<double>(end(t) - begin(t)); }
  // Nodes of tile t computed over `steps` steps: at step k it still needs steps-k nodes a side.
  double computed(std::size_t t, std::size_t steps) const {
    const double s = static_cast<double>(steps);
    return capped_rising_sum(static_cast<double>(end(t)), static_cast<double>(length - 1), s) -
           floored_falling_sum(static_cast<double>(begin(t)), 1, s);
  }
  // Whether tile t is whole and far enough from both boundaries that it computes tile + 2m
  // nodes at margin m, like every other such tile.
  bool regular(std::size_t t, std::size_t steps) const {
    return end(t) - begin(t) == tile && begin(t) >= steps && end(t) + steps <= length;
  }
  // Sum over all tiles of width(t, m, lo, hi).
  double total_width(std::size_t m, std::size_t lo, std::size_t hi) const {
    const double T = static_cast<double>(tiles()), b = static_cast<double>(tile), mm = static_cast<double>(m);
    const double H = static_cast<double>(hi), L = static_cast<double>(lo);
    // Ends: 1 + (t+1) b + m for t < T-1, then length-1+m; each capped at hi.
    const double grow = hi >= 1 + m ? std::floor((H - 1 - mm) / b) : 0;
    const double p = std::clamp(grow, 0.0, T - 1);
    const double ends = p * (1 + mm) + b * p * (p + 1) / 2 + (T - 1 - p) * H +
                        std::min(static_cast<double>(length - 1) + mm, H);
    // Begins: 1 + t b - m, floored at lo.
    const double q = std::clamp(std::ceil((mm + L - 1) / b), 0.0, T);
    const double begins = q * L + (T - q) * (1 - mm) + b * (T * (T - 1) - q * (q - 1)) / 2;
    return ends - begins;
  }
  double total_sent(std::size_t halo) const { return total_width(halo, 0, length); }
  double total_computed_at(std::size_t margin) const { return total_width(margin, 1, length - 1); }
  // The last tile whose nodes tile t reads with a halo of `halo`.
  std::size_t last_source(std::size_t t, std::size_t halo) const {
    const std::size_t last_node = std::min(end(t) + halo, length - 1) - 1;
    return std::min((last_node - 1) / tile, tiles() - 1);
  }
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

std::vector<Task> strip_tasks(const Problem& problem, std::size_t rows, std::size_t steps) {
  const Cut cut{problem.extents.back(), rows};
  const auto [row_values, row_interior] = row_sizes(problem);
  const auto task = [&](std::size_t t) {
    return Task{{cut.sent(t, steps) * row_values, cut.owned(t) * row_values, cut.computed(t, steps) * row_interior, steps},
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
    return Task{{x.sent(tx, steps) * y.sent(ty, steps), x.owned(tx) * y.owned(ty), computed(tx, ty), steps},
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
std::vector<Task> tasks_of(const Problem& problem, const Layout& layout, std::size_t steps) {
  return layout.decomposition == Decomposition::block ? block_tasks(problem, layout.task_extent, steps)
                                                     : strip_tasks(problem, layout.task_extent, steps);
}

// What all tasks of one pass add up to, without listing them, and the first and last tasks
// (the pipeline's fill and drain).
struct PassTotals {
  double tasks = 0, sent = 0, received = 0, computed = 0;
  std::size_t steps = 0;
  double first_sent = 0, first_owned = 0;    // the first task: values uploaded, nodes it owns
  double last_received = 0, last_owned = 0;  // the last task: values downloaded, nodes it owns
};

// The pass totals of one task extent for every number of steps from 1 to `max_steps`, tabulated
// in one sweep: computed nodes accumulate over the margin, the rest are closed forms.
class ExtentTotals {
 public:
  ExtentTotals(const Problem& problem, Decomposition decomposition, std::size_t extent, std::size_t max_steps)
      : passes_(max_steps + 1) {
    const bool block = decomposition == Decomposition::block;
    const Cut slow{problem.extents.back(), extent};
    const Cut fast{problem.extents[0], extent};  // the other axis of a block cut
    const auto [row_values, row_interior] = row_sizes(problem);
    double computed = 0;
    for (std::size_t steps = 1; steps <= max_steps; ++steps) {
      const std::size_t m = steps - 1;  // the margin this many steps add
      computed += block ? fast.total_computed_at(m) * slow.total_computed_at(m) : slow.total_computed_at(m) * row_interior;
      PassTotals& totals = passes_[steps];
      totals.steps = steps;
      totals.computed = computed;
      if (block) {
        totals.tasks = static_cast<double>(fast.tiles() * slow.tiles());
        totals.sent = fast.total_sent(steps) * slow.total_sent(steps);
        totals.received = static_cast<double>((fast.length - 2) * (slow.length - 2));
        totals.first_sent = fast.sent(0, steps) * slow.sent(0, steps);
        totals.first_owned = fast.owned(0) * slow.owned(0);
        totals.last_owned = totals.last_received = fast.owned(fast.tiles() - 1) * slow.owned(slow.tiles() - 1);
      } else {
        totals.tasks = static_cast<double>(slow.tiles());
        totals.sent = slow.total_sent(steps) * row_values;
        totals.received = static_cast<double>(slow.length - 2) * row_values;
        totals.first_sent = slow.sent(0, steps) * row_values;
        totals.first_owned = slow.owned(0) * row_interior;
        totals.last_owned = slow.owned(slow.tiles() - 1) * row_interior;
        totals.last_received = slow.owned(slow.tiles() - 1) * row_values;
      }
    }
  }

  const PassTotals& pass(std::size_t steps) const { return passes_.at(steps); }
  std::size_t max_steps() const { return passes_.size() - 1; }

 private:
  std::vector<PassTotals> passes_;  // passes_[s]: a pass of s steps
};

// Engine times of one pass (all tasks), and of its first and last tasks, under given constants.
struct PassCosts {
  double up = 0, down = 0, compute = 0;
  double fill = 0, drain = 0;                  // the first task's upload, the last task's download
  double first_kernels = 0, last_kernels = 0;  // at least: launches, and each owned node once a step
};

// The pass costs of one task extent for every number of steps, for one set of constants.
class ExtentCosts {
 public:
  ExtentCosts(const Problem& problem, Decomposition decomposition, std::size_t extent, std::size_t max_steps,
              const DeviceConstants& k)
      : costs_(max_steps + 1) {
    const bool block = decomposition == Decomposition::block;
    const TransferCost& up = block ? k.rect_upload : k.upload;
    const TransferCost& down = block ? k.rect_download : k.download;
    const ExtentTotals totals(problem, decomposition, extent, max_steps);
    for (std::size_t steps = 1; steps <= max_steps; ++steps) {
      const PassTotals& t = totals.pass(steps);
      const double launches = static_cast<double>(steps) * k.launch_ns;
      PassCosts& c = costs_[steps];
      c.up = t.tasks * up.latency_ns + t.sent * up.ns_per_value;
      c.down = t.tasks * down.latency_ns + t.received * down.ns_per_value;
      c.compute = t.tasks * launches + t.computed * k.tau_a_ns;
      c.fill = up.time_ns(t.first_sent);
      c.drain = down.time_ns(t.last_received);
      c.first_kernels = launches + static_cast<double>(steps) * t.first_owned * k.tau_a_ns;
      c.last_kernels = launches + static_cast<double>(steps) * t.last_owned * k.tau_a_ns;
      tasks_ = t.tasks;
    }
  }

  const PassCosts& pass(std::size_t steps) const { return costs_[steps]; }
  double tasks() const { return tasks_; }

 private:
  std::vector<PassCosts> costs_;  // costs_[s]: a pass of s steps
  double tasks_ = 0;
};

void validate_layout(const Problem& problem, const Layout& layout) {
  if (layout.decomposition == Decomposition::incore) return;
  if (layout.decomposition == Decomposition::block && problem.extents.size() != 2) {
    throw InvalidArgument("block decomposition is for 2D grids; a " + std::to_string(problem.extents.size()) +
                          "D grid is cut into strips");
  }
  const std::size_t n = layout.decomposition == Decomposition::trivial ? 1 : layout.height;
  if (n < 1 || n > problem.steps) {
    throw InvalidArgument("pyramid height n = " + std::to_string(n) + " must be between 1 and the number of steps " +
                          std::to_string(problem.steps));
  }
  if (layout.task_extent < 1) throw InvalidArgument("a task must own at least one row or block side");
}



// Per-task engine times.
struct Times {
  double up, compute, down;
};

std::vector<Times> task_times(const std::vector<Task>& tasks, const TransferCost& up, const TransferCost& down,
                              const DeviceConstants& k) {
  std::vector<Times> times;
  times.reserve(tasks.size());
  for (const auto& task : tasks) {
    const TaskCounts& c = task.counts;
    times.push_back({up.time_ns(c.sent), static_cast<double>(c.steps) * k.launch_ns + c.computed * k.tau_a_ns,
                     down.time_ns(c.received)});
  }
  return times;
}

// The overlapped schedule (see predict() in model.hpp) over all passes; returns the makespan.
double overlapped_makespan(const std::vector<Task>& full, const std::vector<Times>& full_times,
                           const std::vector<Task>& last, const std::vector<Times>& last_times, std::size_t passes,
                           bool duplex) {
  const std::size_t per_pass = full.size();
  const std::size_t count = per_pass * passes;
  std::vector<double> compute_end(count, 0), down_end(count, 0);
  std::vector<bool> downloaded(count, false);
  double up_free = 0, compute_free = 0, down_free = 0;
  double& copy_free_down = duplex ? down_free : up_free;  // one engine for both without duplex

  const auto times_of = [&](std::size_t j) -> const Times& {
    return j / per_pass + 1 == passes ? last_times[j % per_pass] : full_times[j % per_pass];
  };
  const auto download = [&](std::size_t j) {
    if (downloaded[j]) return;
    const double start = std::max(compute_end[j], copy_free_down);
    down_end[j] = copy_free_down = start + times_of(j).down;
    downloaded[j] = true;
  };
  for (std::size_t j = 0; j < count; ++j) {
    const std::size_t pass = j / per_pass, i = j % per_pass;
    const Times& t = times_of(j);
    double ready = j >= 2 ? compute_end[j - 2] : 0;  // the slot's free layer
    if (pass > 0) {
      const auto& tasks = pass + 1 == passes ? last : full;
      const std::size_t source = (pass - 1) * per_pass + tasks[i].halo_source;
      download(source);
      ready = std::max(ready, down_end[source]);
    }
    const double up_end = std::max(ready, up_free) + t.up;
    up_free = up_end;
    if (j >= 1) download(j - 1);
    if (j >= 2) download(j - 2);
    const double start = std::max({up_end, compute_free, j >= 2 ? down_end[j - 2] : 0.0});
    compute_end[j] = compute_free = start + t.compute;
  }
  download(count - 1);
  return *std::max_element(down_end.begin(), down_end.end());
}

double tau_c_mean(const TransferCost& up, const TransferCost& down) { return 0.5 * (up.ns_per_value + down.ns_per_value); }

std::string bytes_text(std::uint64_t bytes) {
  if (bytes < (1u << 20)) return std::to_string(bytes) + " bytes";
  return text(std::round(static_cast<double>(bytes) / (1 << 20) * 100) / 100) + " MiB";
}

}  // namespace

DeviceConstants DeviceConstants::paper(double tau_c_ns, double tau_a_ns) {
  DeviceConstants k;
  k.upload = k.download = k.rect_upload = k.rect_download = TransferCost{0, tau_c_ns};
  k.tau_a_ns = tau_a_ns;
  return k;
}

const char* to_string(Decomposition decomposition) {
  switch (decomposition) {
    case Decomposition::incore: return "incore";
    case Decomposition::trivial: return "trivial";
    case Decomposition::strip: return "strip";
    case Decomposition::block: return "block";
  }
  return "?";
}

const char* to_string(Schedule schedule) { return schedule == Schedule::serial ? "serial" : "overlapped"; }

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
  if (value_bytes != 4 && value_bytes != 8) {
    throw InvalidArgument("grid values are 4 (float) or 8 (double) bytes, got " + std::to_string(value_bytes));
  }
}

double Problem::interior_nodes() const {
  double nodes = 1;
  for (const std::size_t extent : extents) nodes *= static_cast<double>(extent - 2);
  return nodes;
}

std::vector<TaskCounts> pass_counts(const Problem& problem, const Layout& layout, std::size_t pass_steps) {
  problem.validate();
  validate_layout(problem, layout);
  if (layout.decomposition == Decomposition::incore) {
    double values = 1;
    for (const std::size_t extent : problem.extents) values *= static_cast<double>(extent);
    return {TaskCounts{values, values, problem.interior_nodes() * static_cast<double>(pass_steps), pass_steps}};
  }
  std::vector<TaskCounts> counts;
  for (const auto& task : tasks_of(problem, layout, pass_steps)) counts.push_back(task.counts);
  return counts;
}

std::size_t buffer_layers(Schedule schedule) { return schedule == Schedule::serial ? 1 : 4; }

std::size_t max_strip_rows(const Problem& problem, std::uint64_t budget_bytes, Schedule schedule) {
  problem.validate();
  double row = 1;
  for (std::size_t axis = 0; axis + 1 < problem.extents.size(); ++axis) {
    row *= static_cast<double>(schedule == Schedule::serial ? problem.extents[axis] - 2 : problem.extents[axis]);
  }
  const double rows = std::floor(static_cast<double>(budget_bytes) /
                                 (row * static_cast<double>(problem.value_bytes * buffer_layers(schedule))));
  return static_cast<std::size_t>(std::min(rows, static_cast<double>(problem.extents.back())));
}

std::size_t max_block_side(const Problem& problem, std::uint64_t budget_bytes, Schedule schedule) {
  problem.validate();
  if (problem.extents.size() != 2) return 0;
  const double side = std::floor(std::sqrt(static_cast<double>(budget_bytes) /
                                            static_cast<double>(problem.value_bytes * buffer_layers(schedule))));
  return static_cast<std::size_t>(std::min(side, static_cast<double>(std::max(problem.extents[0], problem.extents[1]))));
}

bool fits_incore(const Problem& problem, std::uint64_t budget_bytes) {
  problem.validate();
  double values = 1;
  for (const std::size_t extent : problem.extents) values *= static_cast<double>(extent);
  return 2.0 * values * static_cast<double>(problem.value_bytes) <= static_cast<double>(budget_bytes);
}

namespace {

// What the pass totals of a layout say, in O(1): the exact time of the serial schedule, or for
// the overlapped one a lower bound. Each engine works through its commands in order, so the run
// lasts at least as long as all kernels plus the first upload and the last download, all uploads
// plus the last task's kernels and download, and all downloads plus the first task's upload and
// kernels (uploads and downloads together without duplex); a task's kernels take at least its
// launches and one computation of each node it owns per step.
struct Estimate {
  Layout layout;
  Prediction prediction;  // total_ns is exact, or a lower bound
  bool exact = false;
};

Estimate estimate(const Problem& problem, const Layout& layout, const DeviceConstants& k, Schedule schedule,
                  const ExtentCosts& costs) {
  Estimate e;
  e.layout = layout;
  Prediction& p = e.prediction;
  const std::size_t n = layout.decomposition == Decomposition::trivial ? 1 : layout.height;
  p.passes = ceil_div(problem.steps, n);
  const std::size_t last_steps = problem.steps - n * (p.passes - 1);
  const PassCosts& full = costs.pass(n);
  const PassCosts& last = costs.pass(last_steps);
  const double before_last = static_cast<double>(p.passes - 1);
  const double up = before_last * full.up + last.up, down = before_last * full.down + last.down;
  p.compute_ns = before_last * full.compute + last.compute;
  p.transfer_ns = up + down;
  p.tasks = static_cast<std::size_t>(costs.tasks());
  e.exact = schedule == Schedule::serial || !k.transfers_overlap_compute;
  if (e.exact) {
    p.total_ns = p.transfer_ns + p.compute_ns;
  } else {
    const PassCosts& first = p.passes == 1 ? last : full;
    p.total_ns = std::max({p.compute_ns + first.fill + last.drain,
                           k.duplex ? up + last.last_kernels + last.drain : up + down,
                           down + first.fill + first.first_kernels});
  }
  p.ns_per_node = p.total_ns / (problem.interior_nodes() * static_cast<double>(problem.steps));
  return e;
}

// The exact prediction of an estimate: the overlapped schedule simulated task by task.
Prediction exact_prediction(const Problem& problem, const Estimate& e, const DeviceConstants& k) {
  if (e.exact) return e.prediction;
  Prediction p = e.prediction;
  const Layout& layout = e.layout;
  const Decomposition d = layout.decomposition == Decomposition::trivial ? Decomposition::strip : layout.decomposition;
  const std::size_t n = layout.decomposition == Decomposition::trivial ? 1 : layout.height;
  const std::size_t last_steps = problem.steps - n * (p.passes - 1);
  const bool block = d == Decomposition::block;
  const TransferCost& up = block ? k.rect_upload : k.upload;
  const TransferCost& down = block ? k.rect_download : k.download;
  const Layout exact{d, n, layout.task_extent};
  const auto full_tasks = tasks_of(problem, exact, n);
  const auto last_tasks = last_steps == n ? full_tasks : tasks_of(problem, exact, last_steps);
  const auto full_times = task_times(full_tasks, up, down, k);
  const auto last_times = last_steps == n ? full_times : task_times(last_tasks, up, down, k);
  p.total_ns = overlapped_makespan(full_tasks, full_times, last_tasks, last_times, p.passes, k.duplex);
  p.ns_per_node = p.total_ns / (problem.interior_nodes() * static_cast<double>(problem.steps));
  return p;
}

Prediction incore_prediction(const Problem& problem, const DeviceConstants& k) {
  Prediction p;
  const TaskCounts all = pass_counts(problem, Layout{Decomposition::incore, 0, 0}, problem.steps).front();
  p.transfer_ns = k.upload.time_ns(all.sent) + k.download.time_ns(all.received);
  p.compute_ns = static_cast<double>(problem.steps) * k.launch_ns + all.computed * k.tau_a_ns;
  p.total_ns = p.transfer_ns + p.compute_ns;
  p.tasks = p.passes = 1;
  p.ns_per_node = p.total_ns / (problem.interior_nodes() * static_cast<double>(problem.steps));
  return p;
}

}  // namespace

Prediction predict(const Problem& problem, const Layout& layout, const DeviceConstants& k, Schedule schedule) {
  problem.validate();
  validate_layout(problem, layout);
  if (layout.decomposition == Decomposition::incore) return incore_prediction(problem, k);
  const bool block = layout.decomposition == Decomposition::block;
  const std::size_t n = layout.decomposition == Decomposition::trivial ? 1 : layout.height;
  const ExtentCosts costs(problem, block ? Decomposition::block : Decomposition::strip, layout.task_extent, n, k);
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

Plan best_plan(const Problem& problem, std::uint64_t budget, const DeviceConstants& k, Schedule schedule,
               Decomposition choice, std::optional<std::size_t> height) {
  problem.validate();
  if (choice == Decomposition::incore) {
    if (!fits_incore(problem, budget)) {
      throw InvalidArgument("grid " + extents_string(problem.extents) + " does not fit in " + bytes_text(budget) +
                            " of device memory (two time layers needed)");
    }
    Plan plan;
    plan.layout = {Decomposition::incore, 0, 0};
    plan.prediction = predict(problem, plan.layout, k, schedule);
    plan.trivial = plan.prediction;
    return plan;
  }
  const bool block = choice == Decomposition::block;
  if (block && problem.extents.size() != 2) {
    throw InvalidArgument("block decomposition is for 2D grids; a " + std::to_string(problem.extents.size()) +
                          "D grid is cut into strips");
  }
  const std::size_t buffer = block ? max_block_side(problem, budget, schedule) : max_strip_rows(problem, budget, schedule);
  const char* unit = block ? "a block side of" : "strips of";
  if (buffer < 3) {
    throw InvalidArgument(std::string("a ") + bytes_text(budget) + " device-memory budget holds " + unit + " " +
                          std::to_string(buffer) + (block ? "" : " rows") + " in the " + to_string(schedule) +
                          " schedule; a pyramid pass needs at least 3 (one owned and one halo a side, n = 1): give "
                          "more memory or use a smaller grid");
  }
  // No task needs to be larger than the widest interior axis it cuts.
  const std::size_t widest = block ? std::max(problem.extents[0], problem.extents[1]) - 2 : problem.extents.back() - 2;
  const std::size_t n_max = std::min(problem.steps, (buffer - 1) / 2);
  if (height && (*height < 1 || *height > n_max)) {
    throw InvalidArgument("pyramid height n = " + std::to_string(*height) + " is not possible here: n must be at "
                          "least 1, at most the " + std::to_string(problem.steps) + " steps, and 2n + 1 must fit in " +
                          unit + " " + std::to_string(buffer) + (block ? "" : " rows") + " (n <= " +
                          std::to_string(n_max) + ")");
  }
  const Decomposition kind = block ? Decomposition::block : Decomposition::strip;
  // Every height with every task size (branch and bound): the largest task at each height gives a
  // first best plan; then every candidate is estimated in O(1). A serial estimate is exact; an
  // overlapped one is a lower bound, and the candidates it cannot rule out are simulated, lowest
  // bound first, until no bound can win.
  Prediction best;
  best.total_ns = std::numeric_limits<double>::infinity();
  Layout best_layout{kind, 0, 0};
  const auto take = [&](const Estimate& e) {
    if (e.prediction.total_ns >= best.total_ns) return;
    const Prediction p = exact_prediction(problem, e, k);
    if (p.total_ns < best.total_ns) {
      best = p;
      best_layout = e.layout;
    }
  };
  const std::size_t n_first = height ? *height : 1, n_last = height ? *height : n_max;
  for (std::size_t n = n_first; n <= n_last; ++n) {
    const std::size_t extent = std::min(buffer - 2 * n, widest);
    take(estimate(problem, Layout{kind, n, extent}, k, schedule, ExtentCosts(problem, kind, extent, n, k)));
  }
  // Overlapped candidates that could still win, kept small: simulated below, best estimate first.
  struct Hopeful {
    std::size_t n, extent;
    double bound;
  };
  std::vector<Hopeful> hopeful;
  for (std::size_t extent = std::min(buffer - 2 * n_first, widest); extent >= 1; --extent) {
    const std::size_t n_top = std::min(n_last, (buffer - extent) / 2);
    const ExtentCosts costs(problem, kind, extent, n_top, k);
    for (std::size_t n = n_first; n <= n_top; ++n) {
      const Estimate e = estimate(problem, Layout{kind, n, extent}, k, schedule, costs);
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
    take(estimate(problem, Layout{kind, h.n, h.extent}, k, schedule, ExtentCosts(problem, kind, h.extent, h.n, k)));
  }
  const std::size_t best_n = best_layout.height, best_extent = best_layout.task_extent;
  const auto evaluate = [&](std::size_t n, std::size_t extent) {
    return predict(problem, Layout{kind, n, extent}, k, schedule);
  };

  Plan plan;
  plan.layout = {kind, best_n, best_extent};
  plan.buffer_extent = best_extent + 2 * best_n;
  plan.prediction = best;
  plan.trivial = evaluate(1, std::min(buffer - 2, widest));
  const double R = static_cast<double>(plan.buffer_extent), n = static_cast<double>(best_n);
  plan.approx_ns_per_node = block ? block_ns_per_node_approx(R, n, tau_c_mean(k.rect_upload, k.rect_download), k.tau_a_ns)
                                  : strip_ns_per_node_approx(R, n, tau_c_mean(k.upload, k.download), k.tau_a_ns);
  return plan;
}

Plan best_plan_auto(const Problem& problem, std::uint64_t budget, const DeviceConstants& k, Schedule schedule,
                    std::optional<std::size_t> height) {
  problem.validate();
  std::vector<Plan> plans;
  if (fits_incore(problem, budget) && !height) plans.push_back(best_plan(problem, budget, k, schedule, Decomposition::incore));
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
  auto best = std::min_element(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
    return a.prediction.total_ns < b.prediction.total_ns;
  });
  Plan chosen = *best;
  // Compare with the trivial algorithm of the strip decomposition where there is one.
  for (const Plan& plan : plans) {
    if (plan.layout.decomposition == Decomposition::strip) chosen.trivial = plan.trivial;
  }
  return chosen;
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
  const double blocks = static_cast<double>(ceil_div(planes - 2, R - 2 * h));
  return blocks * ((3 * r - 2 * halo) * N * N * tau_c + halo * (r - halo - 1) * (N - 2) * (N - 2) * tau_a / threads);
}

std::size_t best_jacobi_halo(std::size_t n, std::size_t planes, std::size_t R, double tau_c, double tau_a,
                             double threads) {
  if (R < 3) throw InvalidArgument("a block of R = " + std::to_string(R) + " planes holds no halo (R >= 3 needed)");
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
