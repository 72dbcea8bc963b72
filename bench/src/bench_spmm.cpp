// `ziggurat-bench spmm`: ziggurat's sparse products beside their peers in one run, on generated
// 3D seven-point block matrices and on real matrices: every block CSR strategy and the automatic
// choice, CSR, ViennaCL's CSR products on the same OpenCL device, cuSPARSE through CuPy where
// there is an NVIDIA GPU, and the memory-traffic limit (the bytes the block CSR product must move
// over the device's measured copy bandwidth). Every result is checked against the CPU reference
// before its time is shown.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "peers.hpp"
#include "format.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/matrix_inputs.hpp"
#include "ziggurat/app/spmm_products.hpp"
#include "ziggurat/tuning/calibration.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/base/version.hpp"

namespace ziggurat::cli {

namespace {

struct Row {
  std::string matrix, precision, product, kernel;
  std::size_t block_size = 1, k = 1;
  double seconds = 0, flops = 0, bytes = 0;
  double max_error = 0;
  std::string note;  // why a peer did not run
};

// One matrix of the benchmark, as CSR and as the block CSR ziggurat runs.
template <class T>
struct BenchMatrix {
  std::string name;
  sparse::Csr<T> csr;
  sparse::Bsr<T> bsr;
};

// Every option that is text, parsed (and the matrix files' sizes checked) before anything is measured.
struct Parsed {
  std::vector<std::size_t> grid;  // empty: by device type
  std::vector<std::size_t> blocks, vectors;
  std::vector<std::filesystem::path> files;
  std::vector<std::string> precisions;
};

Parsed parse(const BenchSpmmOptions& options) {
  Parsed p;
  if (!options.grid.empty()) p.grid = parse_extents(options.grid, 3, 3, "--grid");
  p.blocks = parse_counts(options.blocks, "--blocks", "block sizes 1 to 16");
  for (const std::size_t b : p.blocks)
    if (b > 16) throw InvalidArgument("--blocks takes block sizes 1 to 16, not " + std::to_string(b));
  p.vectors = parse_counts(options.vectors, "--vectors", "numbers of vectors k");
  const std::size_t most = *std::max_element(p.vectors.begin(), p.vectors.end());
  p.files = app::matrix_files(options.matrices, "--matrices", 3 * most);
  p.precisions = parse_precisions(options.precision);
  if (!p.grid.empty()) {  // seven blocks a block row, in CSR and block CSR, and the vectors
    const double rows = double(p.grid[0]) * double(p.grid[1]) * double(p.grid[2]);
    const double b = double(*std::max_element(p.blocks.begin(), p.blocks.end()));
    const double bytes = rows * b * (2 * 7 * b + 3 * double(most)) * sizeof(double);
    check_host_memory(bytes < 1.8e19 ? std::uint64_t(bytes) : std::numeric_limits<std::uint64_t>::max(),
                      "--grid " + options.grid + " --blocks " + options.blocks, "give a smaller grid");
  }
  return p;
}

template <class T>
std::vector<BenchMatrix<T>> bench_matrices(const Parsed& parsed, const Context& context) {
  std::vector<BenchMatrix<T>> matrices;
  const std::vector<std::size_t> grid =
      !parsed.grid.empty() ? parsed.grid
                           : context.device().type == DeviceType::gpu ? std::vector<std::size_t>{96, 96, 96}
                                                                      : std::vector<std::size_t>{32, 32, 32};
  for (const std::size_t b : parsed.blocks) {
    BenchMatrix<T> m;
    m.name = "7-point " + extents_string(grid) + " b=" + std::to_string(b);
    m.bsr = sparse::seven_point_bsr<T>(grid[0], grid[1], grid[2], b);
    m.csr = sparse::to_csr(m.bsr);
    matrices.push_back(std::move(m));
  }
  for (const auto& file : parsed.files) {
    BenchMatrix<T> m;
    m.csr = sparse::read_matrix_market<T>(file).matrix;
    const std::size_t b = sparse::propose_block_size(m.csr);
    m.bsr = sparse::to_bsr(m.csr, b);
    m.name = file.filename().string() + " b=" + std::to_string(b);
    matrices.push_back(std::move(m));
  }
  return matrices;
}

template <class T>
Row time_ziggurat(const Context& context, app::PreparedProduct<T> product, const std::vector<T>& x,
                  const app::ReferenceProduct<T>& reference, std::size_t repeat) {
  product.x->upload(x);
  const app::ProductTiming timing = app::time_product(context, product.enqueue, repeat);
  const app::ProductCheck check = app::check_product(reference, product.y->download());
  if (!check.ok()) {
    throw Error("ziggurat " + product.format + " " + product.kernel + " differs from the CPU reference in " +
                std::to_string(check.outside) + " elements: the benchmark stops rather than time a wrong product");
  }
  Row row;
  row.product = "ziggurat " + product.format;
  row.kernel = product.kernel;
  if (!product.choice.key.empty()) row.kernel = "auto: " + row.kernel;
  row.block_size = product.block_size;
  row.seconds = timing.median_s;
  row.bytes = product.bytes;
  row.max_error = check.max_relative_error;
  return row;
}

Row peer_row(const PeerTiming& peer) {
  Row row;
  row.product = peer.peer;
  row.kernel = peer.product;
  row.seconds = peer.ran ? peer.median_s : 0;
  row.max_error = peer.max_error;
  row.note = peer.ran ? "" : peer.why_not;
  return row;
}

// Every row for one matrix, precision and k.
template <class T>
std::vector<Row> bench_one(const Context& context, const BenchMatrix<T>& m, std::size_t k, double copy_bytes_per_s,
                           const BenchSpmmOptions& options) {
  const std::vector<T> x = app::random_vectors<T>(m.csr.cols, k, 1);
  const app::ReferenceProduct<T> reference = app::reference_product(m.csr, x, k);
  std::vector<Row> rows;
  using sparse::BsrStrategy;
  // Each strategy by its rule, then autotuning's choice (no kernel given).
  for (const std::optional<sparse::BsrKernel> kernel :
       {std::optional<sparse::BsrKernel>{{BsrStrategy::row, 0}}, std::optional<sparse::BsrKernel>{{BsrStrategy::group, 0}},
        std::optional<sparse::BsrKernel>{{BsrStrategy::multirow, 0}}, std::optional<sparse::BsrKernel>{}}) {
    rows.push_back(
        time_ziggurat(context, app::prepare_block_product<T>(context, m.bsr, k, kernel), x, reference, options.repeat));
  }
  const double bsr_bytes = rows.back().bytes;
  rows.push_back(time_ziggurat(context, app::prepare_block_product<T>(context, m.csr, k, std::nullopt), x, reference,
                               options.repeat));
  rows.push_back(peer_row(time_viennacl(context, m.csr, x, k, reference.y, options.repeat)));
  if (!options.python.empty()) rows.push_back(peer_row(time_cusparse(options.python, m.csr, x, k, reference.y, options.repeat)));
  Row limit;
  limit.product = "traffic limit";
  limit.kernel = "BSR bytes / copy bandwidth";
  limit.block_size = m.bsr.block_size;
  limit.bytes = bsr_bytes;
  limit.seconds = bsr_bytes / copy_bytes_per_s;
  rows.push_back(limit);
  for (Row& row : rows) {
    row.matrix = m.name;
    row.precision = sizeof(T) == 4 ? "f32" : "f64";
    row.k = k;
    row.flops = 2.0 * static_cast<double>(m.csr.nonzeros()) * static_cast<double>(k);
  }
  return rows;
}

// "1.52x" of the row against a reference time (>1: the row is faster), "-" without one.
std::string ratio_text(double reference_s, double seconds) {
  return reference_s > 0 && seconds > 0 ? number_text(reference_s / seconds) + "x" : "-";
}

// The times a group of rows (one matrix, precision, k) is compared with.
struct Baselines {
  double cusparse_s = 0, viennacl_s = 0, limit_s = 0;
};

Baselines baselines(const std::vector<Row>& rows, std::size_t first, std::size_t end) {
  Baselines b;
  for (std::size_t i = first; i < end; ++i) {
    if (rows[i].product.rfind("cuSPARSE", 0) == 0) b.cusparse_s = rows[i].seconds;
    if (rows[i].product.rfind("ViennaCL", 0) == 0) b.viennacl_s = rows[i].seconds;
    if (rows[i].product == "traffic limit") b.limit_s = rows[i].seconds;
  }
  return b;
}

void print_table(const std::vector<Row>& rows, std::ostream& out) {
  Table table({"matrix", "prec", "k", "product", "kernel", "ms", "GFLOP/s", "GB/s", "vs cuSPARSE", "vs ViennaCL",
               "of limit"});
  for (std::size_t first = 0; first < rows.size();) {
    std::size_t end = first;
    while (end < rows.size() && rows[end].matrix == rows[first].matrix && rows[end].k == rows[first].k &&
           rows[end].precision == rows[first].precision) {
      ++end;
    }
    const Baselines base = baselines(rows, first, end);
    for (std::size_t i = first; i < end; ++i) {
      const Row& r = rows[i];
      const bool ran = r.seconds > 0;
      const bool limit = r.product == "traffic limit";
      table.add({r.matrix, r.precision, std::to_string(r.k), r.product, ran ? r.kernel : r.kernel + " (" + r.note + ")",
                 ran ? number_text(r.seconds * 1e3) : "-", ran && !limit ? number_text(r.flops / r.seconds * 1e-9) : "-",
                 ran && r.bytes > 0 ? number_text(r.bytes / r.seconds * 1e-9) : "-",
                 limit ? "-" : ratio_text(base.cusparse_s, ran ? r.seconds : 0),
                 limit ? "-" : ratio_text(base.viennacl_s, ran ? r.seconds : 0),
                 limit ? "1" : ratio_text(base.limit_s, ran ? r.seconds : 0)});
    }
    first = end;
  }
  table.print(out);
}

nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const Row& r : rows) {
    list.push_back({{"matrix", r.matrix}, {"precision", r.precision}, {"k", r.k}, {"product", r.product},
                    {"kernel", r.kernel}, {"block_size", r.block_size}, {"time_s", r.seconds},
                    {"gflops", r.seconds > 0 ? r.flops / r.seconds * 1e-9 : 0.0}, {"bytes", r.bytes},
                    {"max_relative_error", r.max_error}, {"not_run_because", r.note}});
  }
  return list;
}

}  // namespace

void add_bench_spmm_options(CLI::App* command, BenchSpmmOptions& options) {
  command->add_option("--grid", options.grid, "Block rows of the seven-point matrices, NXxNYxNZ (default 96x96x96 on "
                                              "a GPU, 32x32x32 elsewhere)");
  command->add_option("--blocks", options.blocks, "Block sizes of the seven-point matrices")->capture_default_str();
  command->add_option("--matrices", options.matrices, "Matrix Market files or folders of them, comma-separated "
                                                      "(each with the block size of least fill)");
  command->add_option("--vectors", options.vectors, "Values of k")->capture_default_str();
  command->add_option("--precision", options.precision, "f32, f64 or both: f32,f64")->capture_default_str();
  command->add_option("--repeat", options.repeat, "Timed products of each kind (after a warm-up)")
      ->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--python", options.python, "Python with CuPy for the cuSPARSE peer (empty: leave it out)")
      ->capture_default_str();
  command->add_option("--device", options.device, "Device selection (see `ziggurat devices`)");
  command->add_flag("--json", options.json, "Print JSON");
}

void run_bench_spmm(const BenchSpmmOptions& options) {
  const Parsed parsed = parse(options);
  Context context(options.device);
  const auto copy = measure_copy_bandwidth(context, std::size_t{256} << 20, 5);
  const double copy_bytes_per_s = std::max(copy.first, copy.second);
  std::vector<Row> rows;
  for (const std::string& precision : parsed.precisions) {
    if (precision == "f64" && !context.device().fp64) continue;
    with_precision(precision, [&](auto zero) {
      using T = decltype(zero);
      for (const BenchMatrix<T>& m : bench_matrices<T>(parsed, context)) {
        for (const std::size_t k : parsed.vectors) {
          const auto more = bench_one(context, m, k, copy_bytes_per_s, options);
          rows.insert(rows.end(), more.begin(), more.end());
        }
      }
    });
  }
  if (options.json) {
    nlohmann::json j = {{"benchmark", "spmm"}, {"date", utc_timestamp()},
                        {"device", {{"name", context.device().name}, {"platform", context.device().platform_name},
                                    {"driver", context.device().driver_version}}},
                        {"copy_bytes_per_s", copy_bytes_per_s}, {"repeat", options.repeat}, {"rows", rows_json(rows)}};
    std::cout << app::json_output(j);
    return;
  }
  std::cout << "ziggurat " << version << " bench spmm, " << utc_timestamp() << "\n"
            << "device: " << context.device().label() << ", driver " << context.device().driver_version << "\n"
            << "copy bandwidth " << number_text(copy_bytes_per_s * 1e-9) << " GB/s (read + write); times are medians of "
            << options.repeat << " products; every result checked against the CPU reference\n"
            << "GFLOP/s count 2 x nonzeros x k; GB/s are the bytes each product must move at least; ratios > 1 mean "
               "faster than the peer (of limit: limit time / time)\n\n";
  print_table(rows, std::cout);
}

}  // namespace ziggurat::cli
