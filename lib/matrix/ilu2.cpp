#include "ziggurat/matrix/ilu2.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_cores.hpp"

namespace ziggurat::sparse {

namespace {

constexpr Index kNone = ~Index{0};

template <class T>
double norm(const T* block, std::size_t bb) {
  double sum = 0;
  for (std::size_t e = 0; e < bb; ++e) sum += double(block[e]) * double(block[e]);
  return std::sqrt(sum);
}

// out = x y for b x b blocks, sums in index order.
template <class T>
void multiply(const T* x, const T* y, std::size_t b, T* out) {
  for (std::size_t r = 0; r < b; ++r)
    for (std::size_t c = 0; c < b; ++c) {
      T s = 0;
      for (std::size_t e = 0; e < b; ++e) s += x[r * b + e] * y[e * b + c];
      out[r * b + c] = s;
    }
}

// out = x^T y.
template <class T>
void multiply_transposed(const T* x, const T* y, std::size_t b, T* out) {
  for (std::size_t r = 0; r < b; ++r)
    for (std::size_t c = 0; c < b; ++c) {
      T s = 0;
      for (std::size_t e = 0; e < b; ++e) s += x[e * b + r] * y[e * b + c];
      out[r * b + c] = s;
    }
}

// target -= x y.
template <class T>
void subtract_product(const T* x, const T* y, std::size_t b, T* target) {
  for (std::size_t r = 0; r < b; ++r)
    for (std::size_t c = 0; c < b; ++c) {
      T s = target[r * b + c];
      for (std::size_t e = 0; e < b; ++e) s -= x[r * b + e] * y[e * b + c];
      target[r * b + c] = s;
    }
}

template <class T>
void symmetrize(T* d, std::size_t b) {
  for (std::size_t r = 0; r < b; ++r)
    for (std::size_t c = r + 1; c < b; ++c) d[r * b + c] = d[c * b + r] = (d[r * b + c] + d[c * b + r]) / T(2);
}

// A copy of a with a zero block wherever a diagonal block is missing (ILU2 fills it).
template <class T>
Bsr<T> with_diagonal_blocks(const Bsr<T>& a) {
  const std::size_t bb = a.block_size * a.block_size;
  Bsr<T> out = a;
  out.block_row_ptr.assign(1, 0);
  out.block_col.clear();
  out.values.clear();
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    bool placed = false;
    for (Index p = a.block_row_ptr[i]; p <= a.block_row_ptr[i + 1]; ++p) {
      const bool end = p == a.block_row_ptr[i + 1];
      if (!placed && (end || a.block_col[p] >= i)) {
        placed = true;
        if (end || a.block_col[p] != i) {
          out.block_col.push_back(static_cast<Index>(i));
          out.values.insert(out.values.end(), bb, T(0));
        }
      }
      if (end) break;
      out.block_col.push_back(a.block_col[p]);
      out.values.insert(out.values.end(), a.values.begin() + std::size_t{p} * bb, a.values.begin() + (std::size_t{p} + 1) * bb);
    }
    out.block_row_ptr.push_back(static_cast<Index>(out.block_col.size()));
  }
  return out;
}

// The elimination tree of the pattern made symmetric (Liu): parent[i] > i, or kNone for a root.
template <class T>
std::vector<Index> elimination_tree(const Bsr<T>& a) {
  const std::size_t n = a.block_rows;
  // Rows k < i that store column i: the transpose's lower part.
  std::vector<Index> t_ptr(n + 1, 0), t_row(a.blocks());
  for (Index c : a.block_col) ++t_ptr[c + 1];
  for (std::size_t i = 0; i < n; ++i) t_ptr[i + 1] += t_ptr[i];
  std::vector<Index> next(t_ptr.begin(), t_ptr.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) t_row[next[a.block_col[p]]++] = static_cast<Index>(i);
  std::vector<Index> parent(n, kNone), ancestor(n, kNone);
  const auto link = [&](Index k, Index i) {
    while (ancestor[k] != kNone && ancestor[k] != i) {
      const Index up = ancestor[k];
      ancestor[k] = i;
      k = up;
    }
    if (ancestor[k] == kNone) {
      ancestor[k] = i;
      parent[k] = i;
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1] && a.block_col[p] < i; ++p) link(a.block_col[p], static_cast<Index>(i));
    for (Index p = t_ptr[i]; p < t_ptr[i + 1] && t_row[p] < i; ++p) link(t_row[p], static_cast<Index>(i));
  }
  return parent;
}

// The rows cut into whole subtrees of the elimination tree (tasks, each a list of rows in
// increasing order, any task independent of the others) and the rows above them (in order).
struct Schedule {
  std::vector<std::vector<Index>> tasks;
  std::vector<Index> rest;
};

Schedule schedule(const std::vector<Index>& parent, std::size_t threads) {
  const std::size_t n = parent.size();
  Schedule s;
  if (threads <= 1 || n < 64) {
    s.rest.resize(n);
    for (std::size_t i = 0; i < n; ++i) s.rest[i] = static_cast<Index>(i);
    return s;
  }
  std::vector<std::size_t> size(n, 1);
  for (std::size_t i = 0; i < n; ++i)
    if (parent[i] != kNone) size[parent[i]] += size[i];
  const std::size_t most = std::max<std::size_t>(16, n / (4 * threads));
  std::vector<Index> task(n, kNone);
  std::size_t count = 0;
  for (std::size_t i = n; i-- > 0;) {
    if (parent[i] != kNone && task[parent[i]] != kNone) {
      task[i] = task[parent[i]];
    } else if (size[i] <= most && (parent[i] == kNone || size[parent[i]] > most)) {
      task[i] = static_cast<Index>(count++);
    }
  }
  s.tasks.resize(count);
  for (std::size_t i = 0; i < n; ++i) (task[i] == kNone ? s.rest : s.tasks[task[i]]).push_back(static_cast<Index>(i));
  // Largest first, for the balance of the cores.
  std::stable_sort(s.tasks.begin(), s.tasks.end(), [](const auto& x, const auto& y) { return x.size() > y.size(); });
  return s;
}

// One factorised block row: first-order L (k increasing) and U and second-order R (j increasing),
// unscaled (L_ik = W_ik D_k^-1, U_ij as eliminated), D_i^-1 and the pivot's size p_i.
template <class T>
struct FactorRow {
  std::vector<Index> lower_col, upper_col, second_col;
  std::vector<T> lower, upper, second;
  std::vector<T> inverse;
  double pivot = 1;
  bool replaced = false;
};

// A sparse row of blocks: the slot of every column present (kNone otherwise).
template <class T>
struct Accumulator {
  std::size_t bb;
  std::vector<Index> slot, cols;
  std::vector<T> values;
  Accumulator(std::size_t n, std::size_t bb_) : bb(bb_), slot(n, kNone) {}
  void clear() {
    for (Index c : cols) slot[c] = kNone;
    cols.clear();
    values.clear();
  }
  // The slot of column c, made (zero) when absent; `made` says which.
  Index find(Index c, bool& made) {
    made = slot[c] == kNone;
    if (made) {
      slot[c] = static_cast<Index>(cols.size());
      cols.push_back(c);
      values.resize(values.size() + bb, T(0));
    }
    return slot[c];
  }
  T* block(Index s) { return values.data() + std::size_t{s} * bb; }
};

// A failed pivot: the row and the message, kept until every task has stopped.
struct Failure {
  std::size_t row = std::numeric_limits<std::size_t>::max();
  std::string message;
};

template <class T>
class Factorizer {
 public:
  Factorizer(const Bsr<T>& a, const Ilu2Options& o)
      : a_(a),
        o_(o),
        b_(a.block_size),
        bb_(b_ * b_),
        tau_(o.threshold),
        tau2_(o.threshold * o.threshold),
        rows_(a.block_rows),
        scale_(a.block_rows),
        columns_(o.symmetric ? a.block_rows : 0) {
    // s_i: the norm of the diagonal block, else the row's largest block norm, else 1.
    for (std::size_t i = 0; i < a.block_rows; ++i) {
      double diagonal = 0, largest = 0;
      for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
        const double x = norm(a.values.data() + std::size_t{p} * bb_, bb_);
        largest = std::max(largest, x);
        if (a.block_col[p] == i) diagonal = x;
      }
      scale_[i] = diagonal > 0 ? diagonal : largest > 0 ? largest : 1.0;
    }
  }

  // Factorises the rows of a task in order; false when a pivot failed (then `failure` tells).
  bool run(const std::vector<Index>& rows, Accumulator<T>& acc, Failure& failure) {
    for (Index i : rows) {
      try {
        o_.symmetric ? symmetric_row(i, acc) : row(i, acc);
      } catch (const ZeroPivot& e) {
        failure = {i, e.what()};
        return false;
      }
    }
    return true;
  }

  std::vector<FactorRow<T>>& rows() { return rows_; }

 private:
  // Nonsymmetric: row i of L, D and U (and R) from A's row i and the finished rows k < i.
  void row(Index i, Accumulator<T>& acc) {
    acc.clear();
    bool made = false;
    std::vector<Index> heap;
    for (Index p = a_.block_row_ptr[i]; p < a_.block_row_ptr[i + 1]; ++p) {
      const Index s = acc.find(a_.block_col[p], made);
      std::copy_n(a_.values.data() + std::size_t{p} * bb_, bb_, acc.block(s));
      if (a_.block_col[p] < i) heap.push_back(a_.block_col[p]);
    }
    std::make_heap(heap.begin(), heap.end(), std::greater<>());
    FactorRow<T>& out = rows_[i];
    std::vector<T> l(bb_);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      const Index k = heap.back();
      heap.pop_back();
      const FactorRow<T>& pivot_row = rows_[k];
      multiply(acc.block(acc.slot[k]), pivot_row.inverse.data(), b_, l.data());
      const double m = norm(l.data(), bb_) * std::sqrt(scale_[k] / scale_[i]) * std::sqrt(pivot_row.pivot);
      if (m < tau2_) continue;  // dropped (NaN is kept, to reach the pivot)
      const bool first = !(m < tau_);
      if (first) {
        out.lower_col.push_back(k);
        out.lower.insert(out.lower.end(), l.begin(), l.end());
      }
      const auto eliminate = [&](const std::vector<Index>& cols, const std::vector<T>& blocks) {
        for (std::size_t q = 0; q < cols.size(); ++q) {
          const Index s = acc.find(cols[q], made);
          if (made && cols[q] < i) {
            heap.push_back(cols[q]);
            std::push_heap(heap.begin(), heap.end(), std::greater<>());
          }
          subtract_product(l.data(), blocks.data() + q * bb_, b_, acc.block(s));
        }
      };
      eliminate(pivot_row.upper_col, pivot_row.upper);
      if (first) eliminate(pivot_row.second_col, pivot_row.second);
    }
    finish(i, acc);
  }

  // IC2: row i of U (and R) from A's upper triangle and column i of the finished rows' U and R;
  // L_ik = U_ki^T D_k^-1.
  void symmetric_row(Index i, Accumulator<T>& acc) {
    acc.clear();
    bool made = false;
    for (Index p = a_.block_row_ptr[i]; p < a_.block_row_ptr[i + 1]; ++p) {
      if (a_.block_col[p] < i) continue;
      const Index s = acc.find(a_.block_col[p], made);
      std::copy_n(a_.values.data() + std::size_t{p} * bb_, bb_, acc.block(s));
    }
    std::vector<std::pair<Index, bool>> column = columns_[i];
    std::sort(column.begin(), column.end());
    FactorRow<T>& out = rows_[i];
    std::vector<T> l(bb_);
    for (const auto& [k, first] : column) {
      const FactorRow<T>& pivot_row = rows_[k];
      const std::vector<Index>& cols = first ? pivot_row.upper_col : pivot_row.second_col;
      const std::vector<T>& blocks = first ? pivot_row.upper : pivot_row.second;
      const std::size_t at = std::lower_bound(cols.begin(), cols.end(), i) - cols.begin();
      multiply_transposed(blocks.data() + at * bb_, pivot_row.inverse.data(), b_, l.data());
      if (first) {
        out.lower_col.push_back(k);
        out.lower.insert(out.lower.end(), l.begin(), l.end());
      }
      const auto eliminate = [&](const std::vector<Index>& row_cols, const std::vector<T>& row_blocks) {
        for (std::size_t q = std::lower_bound(row_cols.begin(), row_cols.end(), i) - row_cols.begin(); q < row_cols.size();
             ++q) {
          subtract_product(l.data(), row_blocks.data() + q * bb_, b_, acc.block(acc.find(row_cols[q], made)));
        }
      };
      eliminate(pivot_row.upper_col, pivot_row.upper);
      if (first) eliminate(pivot_row.second_col, pivot_row.second);
    }
    finish(i, acc);
    // Column lists of the rows below: U_ij and R_ij of this row, under a lock of column j's stripe.
    const auto publish = [&](const std::vector<Index>& cols, bool first) {
      for (Index j : cols) {
        const std::lock_guard<std::mutex> lock(stripes_[j % kStripes]);
        columns_[j].emplace_back(i, first);
      }
    };
    publish(out.upper_col, true);
    publish(out.second_col, false);
  }

  // The pivot (checked, inverted, replaced where allowed) and the classified upper blocks.
  void finish(Index i, Accumulator<T>& acc) {
    FactorRow<T>& out = rows_[i];
    std::vector<T> d(acc.block(acc.slot[i]), acc.block(acc.slot[i]) + bb_);
    if (o_.symmetric) symmetrize(d.data(), b_);
    out.inverse = d;
    double failed = 0;
    if (!invertible(out.inverse, i, failed)) {
      if (!o_.replace_tiny_pivots || std::isnan(failed)) throw ZeroPivot(i, message(i, failed));
      // Every diagonal entry moved away from zero by delta (tau's size) times the row's scale, then
      // 10, 100 and 1000 times that, then the same of the block's own norm (a block grown large but
      // singular), until the block inverts. The replacement's size is chosen, not tested against
      // the tiny-pivot bound again (with tau = 0 it sits on it).
      const double delta = std::min(1.0, std::max(tau_, std::sqrt(double(std::numeric_limits<T>::epsilon()))));
      const double row = scale_[i] / std::sqrt(double(b_)), own = norm(d.data(), bb_) / std::sqrt(double(b_));
      const std::vector<T> original = d;
      for (int attempt = 0;; ++attempt) {
        d = original;
        const T add = static_cast<T>(delta * std::pow(10.0, attempt % 4) * (attempt < 4 ? row : std::max(row, own)));
        for (std::size_t r = 0; r < b_; ++r) d[r * b_ + r] += d[r * b_ + r] < T(0) ? -add : add;
        out.inverse = d;
        if (invert_block(out.inverse.data(), b_, &failed)) break;
        if (attempt == 7 || std::isnan(failed)) throw ZeroPivot(i, message(i, failed));
      }
      out.replaced = true;
    }
    if (o_.symmetric) symmetrize(out.inverse.data(), b_);
    out.pivot = norm(d.data(), bb_) / scale_[i];
    // Upper blocks by column.
    std::vector<std::pair<Index, Index>> upper;  // (column, slot)
    for (std::size_t s = 0; s < acc.cols.size(); ++s)
      if (acc.cols[s] > i) upper.emplace_back(acc.cols[s], static_cast<Index>(s));
    std::sort(upper.begin(), upper.end());
    for (const auto& [j, s] : upper) {
      const T* u = acc.block(s);
      const double m = norm(u, bb_) / std::sqrt(scale_[i] * scale_[j]) / std::sqrt(out.pivot);
      if (m < tau2_) continue;
      const bool first = !(m < tau_);
      (first ? out.upper_col : out.second_col).push_back(j);
      std::vector<T>& blocks = first ? out.upper : out.second;
      blocks.insert(blocks.end(), u, u + bb_);
    }
  }

  // D^-1 in place by invert_block, also refused when ||D|| <= sqrt(eps) s_i; `failed` gets the
  // failing magnitude.
  bool invertible(std::vector<T>& d, Index i, double& failed) const {
    const double size = norm(d.data(), bb_);
    if (!(size > std::sqrt(double(std::numeric_limits<T>::epsilon())) * scale_[i])) {
      failed = size;
      return false;
    }
    return invert_block(d.data(), b_, &failed);
  }

  std::string message(Index i, double pivot) const {
    return pivot_failure_message(i, pivot, o_.shift, o_.symmetric ? "IC2" : "ILU2") +
           (o_.symmetric ? "; or a smaller threshold (--threshold)"
                         : "; or a smaller threshold (--threshold), or static pivoting (--static-pivoting on)");
  }

  static constexpr std::size_t kStripes = 64;
  const Bsr<T>& a_;
  const Ilu2Options& o_;
  std::size_t b_, bb_;
  double tau_, tau2_;
  std::vector<FactorRow<T>> rows_;
  std::vector<double> scale_;
  std::vector<std::vector<std::pair<Index, bool>>> columns_;  // IC2: (k, first order) of U_kj, R_kj per j
  std::mutex stripes_[kStripes];
};

}  // namespace

template <class T>
Ilu2Factors<T> factorize_ilu2(const Bsr<T>& a, const Ilu2Options& options) {
  if (!(options.threshold >= 0) || !std::isfinite(options.threshold)) {
    throw InvalidArgument("the ILU2 threshold must be finite and >= 0, not " + std::to_string(options.threshold));
  }
  validate(a);
  if (a.rows != a.cols || a.block_rows != a.block_cols) {
    throw InvalidArgument("ILU2 needs a square matrix; this one is " + std::to_string(a.rows) + " x " + std::to_string(a.cols));
  }
  const IluInput<T> input = prepare_ilu(with_diagonal_blocks(a), options.shift);
  const Bsr<T>& m = input.matrix;
  const std::size_t threads = options.threads > 0 ? options.threads : host_threads();
  const Schedule plan = schedule(elimination_tree(m), threads);
  Factorizer<T> factorizer(m, options);
  const std::size_t bb = m.block_size * m.block_size;
  // The subtrees on every thread, each taking the next task; the least failing row wins.
  std::vector<Failure> failures(plan.tasks.size());
  std::vector<std::exception_ptr> errors(plan.tasks.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    Accumulator<T> acc(m.block_rows, bb);
    for (std::size_t t; (t = next++) < plan.tasks.size();) {
      try {
        factorizer.run(plan.tasks[t], acc, failures[t]);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(threads, plan.tasks.size()); ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
  Failure failure;
  for (const Failure& f : failures)
    if (f.row < failure.row) failure = f;
  if (failure.row != std::numeric_limits<std::size_t>::max()) throw ZeroPivot(failure.row, failure.message);
  {
    Accumulator<T> acc(m.block_rows, bb);
    if (!factorizer.run(plan.rest, acc, failure)) throw ZeroPivot(failure.row, failure.message);
  }
  // The layout of ilu_factors.hpp: L_ik, D_i^-1, D_i^-1 U_ij.
  std::vector<FactorRow<T>>& rows = factorizer.rows();
  Ilu2Factors<T> out;
  Bsr<T>& f = out.factors;
  f.rows = m.rows;
  f.cols = m.cols;
  f.block_size = m.block_size;
  f.block_rows = m.block_rows;
  f.block_cols = m.block_cols;
  f.block_row_ptr.assign(1, 0);
  out.diagonal.resize(m.block_rows);
  const std::size_t b = m.block_size;
  std::vector<T> line(b);
  for (std::size_t i = 0; i < m.block_rows; ++i) {
    FactorRow<T>& r = rows[i];
    f.block_col.insert(f.block_col.end(), r.lower_col.begin(), r.lower_col.end());
    f.values.insert(f.values.end(), r.lower.begin(), r.lower.end());
    out.diagonal[i] = static_cast<Index>(f.block_col.size());
    f.block_col.push_back(static_cast<Index>(i));
    f.values.insert(f.values.end(), r.inverse.begin(), r.inverse.end());
    const T* d = r.inverse.data();
    for (std::size_t q = 0; q < r.upper_col.size(); ++q) {
      f.block_col.push_back(r.upper_col[q]);
      const T* u = r.upper.data() + q * bb;
      const std::size_t at = f.values.size();
      f.values.resize(at + bb);
      for (std::size_t c = 0; c < b; ++c) {  // D_i^-1 U_ij column by column, as factorize_ilu0
        for (std::size_t e = 0; e < b; ++e) line[e] = u[e * b + c];
        for (std::size_t row = 0; row < b; ++row) {
          T s = 0;
          for (std::size_t e = 0; e < b; ++e) s += d[row * b + e] * line[e];
          f.values[at + row * b + c] = s;
        }
      }
    }
    f.block_row_ptr.push_back(static_cast<Index>(f.block_col.size()));
    out.second_order_blocks += r.second_col.size();
    out.replaced_pivots += r.replaced ? 1 : 0;
    r = FactorRow<T>{};  // freed as it goes
  }
  out.fill = a.blocks() > 0 ? double(f.blocks()) / double(a.blocks()) : 1.0;
  out.parallel_rows = m.block_rows - plan.rest.size();
  return out;
}

#define ZIGGURAT_ILU2_INSTANTIATE(T)                                              \
  template Ilu2Factors<T> factorize_ilu2<T>(const Bsr<T>&, const Ilu2Options&);

ZIGGURAT_ILU2_INSTANTIATE(float)
ZIGGURAT_ILU2_INSTANTIATE(double)

#undef ZIGGURAT_ILU2_INSTANTIATE

}  // namespace ziggurat::sparse
