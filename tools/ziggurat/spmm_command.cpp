// `ziggurat spmm`: Y = A X for a Matrix Market matrix and a set of k vectors, in block CSR, CSR
// or diagonal format on one device, timed and checked against the CPU reference.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/matrix_inputs.hpp"
#include "ziggurat/app/spmm_products.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/io/npy.hpp"

namespace ziggurat::cli {

namespace {

struct SpmmOptions {
  FileOptions files;  // every file read or written, checked before any work
  std::string matrix;
  std::string block = "auto";
  std::string format = "bsr";
  std::size_t vectors = 0;  // 0: from --x, else 1
  std::string x;
  std::string out;
  std::string kernel = "auto";
  std::size_t lanes = 0;
  std::string precision;  // empty: the --x array's type, else f32
  std::string device;
  std::size_t repeat = 10;
  std::uint64_t seed = 1;
  bool json = false;
};

std::size_t parse_block_size(const std::string& text) {
  std::size_t used = 0;
  unsigned long b = 0;
  try {
    b = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || b < 1 || b > 16) throw InvalidArgument("--block is 1 to 16 or auto, not '" + text + "'");
  return b;
}

// --kernel: auto (nothing: autotuning chooses) or a strategy, with --lanes for multirow.
std::optional<sparse::BsrKernel> kernel_option(const SpmmOptions& o) {
  if (o.kernel == "auto") return std::nullopt;
  try {
    return sparse::BsrKernel{sparse::parse_bsr_strategy(o.kernel), o.lanes};
  } catch (const InvalidArgument&) {
    throw InvalidArgument("unknown block CSR kernel '" + o.kernel + "': --kernel is auto, row, group or multirow");
  }
}

void check_options(const SpmmOptions& o) {
  if (o.format != "bsr" && o.format != "csr" && o.format != "dia") {
    throw InvalidArgument("--format is bsr, csr or dia, not '" + o.format + "'");
  }
  kernel_option(o);
  if (o.format == "dia" && o.kernel != "auto") throw InvalidArgument("--kernel chooses among block CSR kernels; DIA has one");
  if (o.format == "bsr" && o.block != "auto") parse_block_size(o.block);
  if (o.format != "bsr" && o.block != "auto") {
    throw InvalidArgument("--block sets the block size of --format bsr; --format " + o.format + " has none");
  }
  if (o.lanes != 0 && o.kernel != "multirow") throw InvalidArgument("--lanes is for --kernel multirow");
  if (!o.x.empty() && o.vectors != 0) throw InvalidArgument("give --vectors or --x, not both: --x says how many vectors");
}

// X from --x (an n x k or, for k = 1, n array) or seeded random; k set from it.
template <class T>
std::vector<T> input_vectors(const SpmmOptions& o, std::size_t cols, std::size_t& k) {
  if (o.x.empty()) {
    k = o.vectors == 0 ? 1 : o.vectors;
    return app::random_vectors<T>(cols, k, o.seed);
  }
  std::vector<std::size_t> shape;
  std::vector<T> x = read_npy<T>(o.x, shape);
  if (shape.empty() || shape.size() > 2 || shape[0] != cols || (shape.size() == 2 && shape[1] == 0)) {
    std::string text;
    for (std::size_t extent : shape) text += (text.empty() ? "" : ", ") + std::to_string(extent);
    throw InvalidArgument("--x " + o.x + " has shape (" + text + "); the matrix has " +
                          std::to_string(cols) + " columns, so X must be (" + std::to_string(cols) + ", k) or (" +
                          std::to_string(cols) + ")");
  }
  k = shape.size() == 2 ? shape[1] : 1;
  const auto bad = std::find_if(x.begin(), x.end(), [](T v) { return !std::isfinite(v); });
  if (bad != x.end()) {
    const std::size_t at = std::size_t(bad - x.begin());
    throw InvalidArgument("--x " + o.x + " holds " + (std::isnan(*bad) ? "NaN" : "an infinity") + " at row " +
                          std::to_string(at / k) + (shape.size() == 2 ? ", column " + std::to_string(at % k) : "") +
                          ": a product needs finite values");
  }
  return x;
}

// Y = A X must be finite in T, else no kernel can be checked against it.
template <class T>
void require_finite_product(const app::ReferenceProduct<T>& reference, std::size_t k) {
  const auto bad = std::find_if(reference.y.begin(), reference.y.end(), [](T v) { return !std::isfinite(v); });
  if (bad == reference.y.end()) return;
  const std::size_t at = std::size_t(bad - reference.y.begin());
  throw InvalidArgument("Y = A X overflows " + std::string(sizeof(T) == 4 ? "float" : "double") + " at row " +
                        std::to_string(at / k) + ", vector " + std::to_string(at % k) +
                        ": scale A or X down" + (sizeof(T) == 4 ? ", or compute in --precision f64" : ""));
}

// A symmetric file becomes the symmetric half-stored DIA (method notes, section 5).
template <class T>
app::PreparedProduct<T> prepare(const Context& context, const SpmmOptions& o, const sparse::MatrixMarketMatrix<T>& file,
                           std::size_t k, std::size_t& block_size) {
  const sparse::Csr<T>& a = file.matrix;
  if (o.format == "dia") {
    const bool symmetric = file.header.symmetry == sparse::MatrixMarketSymmetry::symmetric;
    return app::prepare_dia_product(context, sparse::to_dia(a, symmetric), k);
  }
  const std::optional<sparse::BsrKernel> kernel = kernel_option(o);
  if (o.format == "csr") return app::prepare_block_product<T>(context, a, k, kernel);
  block_size = o.block == "auto" ? sparse::propose_block_size(a) : parse_block_size(o.block);
  return app::prepare_block_product<T>(context, sparse::to_bsr(a, block_size), k, kernel);
}

nlohmann::json choice_json(const sparse::BsrChoice& choice) {
  nlohmann::json seconds = nlohmann::json::object();
  for (const auto& [variant, s] : choice.seconds) seconds[variant] = s;
  return {{"key", choice.key}, {"source", choice.measured_now ? "measured now" : "tuning record"}, {"time_s", seconds}};
}

// k: the columns of --x (its header alone), else --vectors, else 1.
std::size_t vector_count(const SpmmOptions& o) {
  if (o.x.empty()) return o.vectors == 0 ? 1 : o.vectors;
  const std::vector<std::size_t> shape = read_npy_header(o.x).shape;
  return shape.size() == 2 ? shape[1] : 1;
}

template <class T>
void run(const SpmmOptions& o) {
  check_options(o);
  app::check_matrix_memory("--matrix", o.matrix, 3 * vector_count(o), sizeof(T));  // X, Y and the reference
  const sparse::MatrixMarketMatrix<T> file = sparse::read_matrix_market<T>(o.matrix);
  const sparse::Csr<T>& a = file.matrix;
  std::size_t k = 0;
  const std::vector<T> x = input_vectors<T>(o, a.cols, k);
  const app::ReferenceProduct<T> reference = app::reference_product(a, x, k);
  require_finite_product(reference, k);
  Context context(o.device);
  require_device_precision(context.device(), o.precision);
  std::size_t block_size = 1;
  app::PreparedProduct<T> product = prepare(context, o, file, k, block_size);
  product.x->upload(x);
  const app::ProductTiming timing = app::time_product(context, product.enqueue, o.repeat);
  const std::vector<T> y = product.y->download();
  const app::ProductCheck check = app::check_product(reference, y);
  if (!check.ok()) {
    throw Error(std::to_string(check.outside) + " elements of Y differ from the CPU reference by more than the tolerance "
                "(max relative error " + number_text(check.max_relative_error) + "): a kernel is wrong on this device; "
                "please report it with the matrix");
  }
  if (!o.out.empty()) {
    write_npy(o.out, y.data(), k == 1 && (o.x.empty() || read_npy_header(o.x).shape.size() == 1)
                                   ? std::vector<std::size_t>{a.rows}
                                   : std::vector<std::size_t>{a.rows, k});
  }
  const double flops = 2.0 * static_cast<double>(a.nonzeros()) * static_cast<double>(k);
  nlohmann::json summary = {
      {"device", context.device().name},
      {"platform", context.device().platform_name},
      {"driver", context.device().driver_version},
      {"matrix", o.matrix},
      {"rows", a.rows},
      {"cols", a.cols},
      {"nonzeros", a.nonzeros()},
      {"format", product.format},
      {"block_size", product.block_size},
      {"k", k},
      {"precision", sizeof(T) == 4 ? "f32" : "f64"},
      {"kernel", product.kernel},
      {"repeat", o.repeat},
      {"time_s", timing.median_s},
      {"min_time_s", timing.min_s},
      {"gflops", flops / timing.median_s * 1e-9},
      {"bytes", product.bytes},
      {"effective_gb_per_s", product.bytes / timing.median_s * 1e-9},
      {"max_relative_error", check.max_relative_error},
      {"input", o.x.empty() ? "random, seed " + std::to_string(o.seed) : o.x},
  };
  if (!product.choice.key.empty()) summary["auto"] = choice_json(product.choice);
  if (!o.out.empty()) summary["output"] = o.out;
  if (o.json) {
    std::cout << app::json_output(summary);
    return;
  }
  std::cout << "device      " << context.device().label() << "\n"
            << "matrix      " << o.matrix << ": " << a.rows << " x " << a.cols << ", " << a.nonzeros() << " nonzeros\n"
            << "product     " << product.format << (product.format == "bsr" ? " b = " + std::to_string(block_size) : "")
            << ", k = " << k << ", " << (sizeof(T) == 4 ? "float" : "double") << ", kernel " << product.kernel
            << (product.choice.key.empty() ? "" : product.choice.measured_now ? " (auto, measured now)" : " (auto, from the tuning record)")
            << "\n"
            << "time        " << number_text(timing.median_s * 1e3) << " ms median of " << o.repeat << ", best "
            << number_text(timing.min_s * 1e3) << " ms\n"
            << "throughput  " << number_text(flops / timing.median_s * 1e-9) << " GFLOP/s, "
            << number_text(product.bytes / timing.median_s * 1e-9) << " GB/s effective (" << bytes_text(static_cast<std::uint64_t>(product.bytes))
            << " moved)\n"
            << "check       max |Y - reference| / max |reference| = " << number_text(check.max_relative_error) << "\n";
  if (!o.out.empty()) std::cout << "output      " << o.out << "\n";
}

}  // namespace

void add_spmm_command(CLI::App& app) {
  auto options = std::make_shared<SpmmOptions>();
  auto* command = app.add_subcommand("spmm", "Y = A X: a Matrix Market matrix times a set of k vectors, on the device, "
                                             "timed and checked against the CPU reference");
  options->files.add_input(command, "--matrix", options->matrix, "A, a Matrix Market coordinate file")->required();
  command->add_option("--block", options->block, "Block size b of --format bsr, 1 to 16, or auto (the least fill)")
      ->capture_default_str();
  command->add_option("--format", options->format, "bsr, csr or dia")->capture_default_str();
  command->add_option("--vectors", options->vectors, "k, the number of random vectors (default 1)")->check(whole_number(1));
  options->files.add_input(command, "--x", options->x, "X, a .npy array of shape (n, k) or (n), float32 or float64");
  options->files.add_output(command, "--out", options->out, "Write Y here (.npy, shape (m, k), or (m) when X is 1-D; atomically)");
  command->add_option("--kernel", options->kernel, "Block CSR kernel: auto, row, group or multirow")->capture_default_str();
  command->add_option("--lanes", options->lanes, "Work-items per (line, vector) of --kernel multirow: 1, 2, 4, .. 32 "
                                                 "(default: the power of two nearest below the mean row length; 1 on CPU devices)")
      ->check(whole_number(1));
  add_precision_option(command, options->precision, "f32 (float) or f64 (double); default: the --x array's type, else f32");
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`); default: ZIGGURAT_DEVICE, else the first GPU");
  command->add_option("--repeat", options->repeat, "Timed products (after one warm-up)")->capture_default_str()->check(whole_number(1));
  command->add_option("--seed", options->seed, "Seed of the random X")->capture_default_str()->check(whole_number(0));
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->callback([options] {
    options->files.check();
    options->precision = precision_or_input_type(options->precision, options->x);
    with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); });
  });
}

}  // namespace ziggurat::cli
