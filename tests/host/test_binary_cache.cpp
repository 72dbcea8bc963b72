// The on-disk program-binary cache, with stand-in binaries (the device tests use real ones).

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "../support/util.hpp"
#include "ziggurat/base/binary_cache.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"
#include "ziggurat/base/version.hpp"

using namespace ziggurat;
using test::TempDir;

namespace {
const BinaryCache::Binary kBinary = {0x7f, 'E', 'L', 'F', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
}

TEST_CASE("the cache returns what was stored, under the exact key only") {
  TempDir dir;
  BinaryCache cache(dir / "programs");
  CHECK_FALSE(cache.load("key A").has_value());
  cache.store("key A", kBinary);
  CHECK(cache.last_write_error().empty());
  REQUIRE(cache.load("key A").has_value());
  CHECK(*cache.load("key A") == kBinary);
  CHECK_FALSE(cache.load("key B").has_value());
  CHECK(test::count_files(dir / "programs", ".tmp") == 0);

  // An intact entry for another key under this key's file name (a hash collision) is not used,
  // and not deleted either.
  std::filesystem::copy_file(cache.entry_path("key A"), cache.entry_path("key B"));
  CHECK_FALSE(cache.load("key B").has_value());
  CHECK(std::filesystem::exists(cache.entry_path("key B")));
  CHECK(cache.damaged_entries_deleted() == 0);
}

TEST_CASE("damaged entries are deleted, never used") {
  TempDir dir;
  BinaryCache cache(dir.path());
  const auto damage = [&](auto edit) {
    cache.store("k", kBinary);
    std::string bytes = test::read_bytes(cache.entry_path("k"));
    edit(bytes);
    test::write_bytes(cache.entry_path("k"), bytes);
    const std::size_t before = cache.damaged_entries_deleted();
    CHECK_FALSE(cache.load("k").has_value());
    CHECK(cache.damaged_entries_deleted() == before + 1);
    CHECK_FALSE(std::filesystem::exists(cache.entry_path("k")));
  };
  damage([](std::string& b) { b.resize(b.size() / 2); });        // truncated
  damage([](std::string& b) { b.resize(b.size() - 1); });        // one byte short
  damage([](std::string& b) { b.back() ^= 0x55; });              // a flipped bit in the binary
  damage([](std::string& b) { b[0] = 'X'; });                     // wrong magic
  damage([](std::string& b) { b.clear(); });                      // empty
  damage([](std::string& b) { b += "trailing"; });               // too long
  damage([](std::string& b) { b.replace(8, 8, std::string(8, '\xff')); });  // absurd key size
}

TEST_CASE("a disabled cache stores and finds nothing; an unwritable one records why") {
  BinaryCache off = BinaryCache::disabled();
  CHECK_FALSE(off.enabled());
  off.store("k", kBinary);
  CHECK_FALSE(off.load("k").has_value());

  TempDir dir;
  test::write_bytes(dir / "file", "not a folder");
  BinaryCache blocked(dir / "file" / "programs");
  CHECK_NOTHROW(blocked.store("k", kBinary));
  CHECK_FALSE(blocked.last_write_error().empty());
  CHECK_FALSE(blocked.load("k").has_value());
}

TEST_CASE("the cache location follows the environment") {
  test::EnvGuard cache_dir("ZIGGURAT_CACHE_DIR", nullptr), xdg("XDG_CACHE_HOME", nullptr),
      home("HOME", "/home/someone"), switch_("ZIGGURAT_CACHE", nullptr);
  CHECK(BinaryCache::from_environment().directory() == "/home/someone/.cache/ziggurat/programs");
  {
    test::EnvGuard set("XDG_CACHE_HOME", "/xdg");
    CHECK(BinaryCache::from_environment().directory() == "/xdg/ziggurat/programs");
    test::EnvGuard own("ZIGGURAT_CACHE_DIR", "/mine");
    CHECK(BinaryCache::from_environment().directory() == "/mine/programs");
  }
  for (const char* off : {"off", "OFF", "0", "no", "False"}) {
    test::EnvGuard disable("ZIGGURAT_CACHE", off);
    CHECK_FALSE(BinaryCache::from_environment().enabled());
  }
  for (const char* on : {"on", "1", "YES", "true", ""}) {
    test::EnvGuard enable("ZIGGURAT_CACHE", on);
    CHECK(BinaryCache::from_environment().enabled());
  }
  {
    test::EnvGuard unclear("ZIGGURAT_CACHE", "maybe");  // neither: refused, not read as on
    CHECK_THROWS_WITH_AS(BinaryCache::from_environment(), doctest::Contains("ZIGGURAT_CACHE is 'maybe'"), InvalidArgument);
  }
  test::EnvGuard no_home("HOME", nullptr);
  CHECK_FALSE(BinaryCache::from_environment().enabled());
}

TEST_CASE("the program key covers source, options, device, driver and library version") {
  DeviceInfo device;
  device.name = "GPU";
  device.vendor = "V";
  device.platform_name = "P";
  device.driver_version = "1.0";
  const std::string key = program_cache_key(device, "source", "-DA=1");
  CHECK(key != program_cache_key(device, "source2", "-DA=1"));
  CHECK(key != program_cache_key(device, "source", "-DA=2"));
  DeviceInfo other = device;
  other.driver_version = "1.1";
  CHECK(key != program_cache_key(other, "source", "-DA=1"));
  other = device;
  other.name = "GPU2";
  CHECK(key != program_cache_key(other, "source", "-DA=1"));
  CHECK(key.find(std::string("library ") + version + "\n") != std::string::npos);
}

TEST_CASE("kernel sources are embedded behind the shared prologue, and ZIGGURAT_KERNEL_DIR replaces them") {
  test::EnvGuard no_override("ZIGGURAT_KERNEL_DIR", nullptr);
  const std::string embedded = kernel_source("heat_stencil");
  CHECK(embedded.find("__kernel void heat2d_naive") != std::string::npos);
  CHECK(embedded.rfind("// The prologue of every ziggurat kernel file", 0) == 0);  // the prologue comes first
  CHECK(embedded.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable") < embedded.find("__kernel"));
  CHECK(embedded_kernel_names() == std::vector<std::string>{"block_ilu", "block_products", "ebe", "ebe_factor", "ebe_storage", "heat_blocked", "heat_stencil", "poisson_blocked", "poisson_stencil", "spmm", "stream", "vector_ops", "wave_step"});
  for (const std::string& name : embedded_kernel_names()) {  // no kernel file repeats the prologue's work
    CHECK(kernel_source(name).find("cl_khr_fp64") == kernel_source(name).rfind("cl_khr_fp64"));
  }
  CHECK_THROWS_WITH_AS(kernel_source("nope"), doctest::Contains("known: block_ilu block_products ebe ebe_factor ebe_storage heat_blocked heat_stencil poisson_blocked poisson_stencil spmm stream vector_ops"), InvalidArgument);
  CHECK_THROWS_AS(kernel_source("prologue"), InvalidArgument);  // not a kernel family of its own

  TempDir dir;
  test::write_bytes(dir / "prologue.cl", "// my prologue\n");
  test::write_bytes(dir / "heat_stencil.cl", "// my version\n");
  test::EnvGuard override_dir("ZIGGURAT_KERNEL_DIR", dir.path().c_str());
  CHECK(kernel_source("heat_stencil") == "// my prologue\n\n// my version\n");
  CHECK_THROWS_WITH_AS(kernel_source("stream"), doctest::Contains("ZIGGURAT_KERNEL_DIR is set"), IoError);
}

namespace {
// Counts the occurrences of `what` in `text`.
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}
}  // namespace

TEST_CASE("kernel parts are put in place of their #include lines, once a program") {
  test::EnvGuard no_override("ZIGGURAT_KERNEL_DIR", nullptr);
  for (const char* family : {"vector_ops", "poisson_stencil", "poisson_blocked", "heat_blocked", "ebe"}) {
    const std::string source = kernel_source(family);
    CHECK_MESSAGE(occurrences(source, "#define GROUP_REDUCE(") == 1, family);  // the one reduction
    CHECK_MESSAGE(source.find("\n#include \"") == std::string::npos, family);  // every part in place
  }
  const std::string ebe = kernel_source("ebe");
  for (const char* kernel : {"void ebe_multiply(", "void ebe_project(", "void ebe_project_columns(",
                             "void ebe_project_tensor(", "void ebe_reduce("}) {
    CHECK_MESSAGE(occurrences(ebe, kernel) == 1, kernel);
  }
  CHECK(occurrences(kernel_source("poisson_blocked"), "inline REAL walk3d(") == 1);
  CHECK(kernel_source("heat_blocked").find("jacobi3d_blocked(") == std::string::npos);  // beside its launcher now
  const auto names = embedded_kernel_names();
  CHECK(std::find(names.begin(), names.end(), "group_reduce") == names.end());  // a part is no program

  TempDir dir;
  test::write_bytes(dir / "prologue.cl", "");
  test::write_bytes(dir / "stream.cl", "#include \"base/nothing.cl\"\n");
  test::EnvGuard override_dir("ZIGGURAT_KERNEL_DIR", dir.path().c_str());
  CHECK_THROWS_WITH_AS(kernel_source("stream"), doctest::Contains("'nothing.cl', which is no embedded kernel part"),
                       InvalidArgument);
}

TEST_CASE("build options keep their order and name the element type") {
  CHECK(BuildOptions().real_type<float>().str() == "-DREAL=float");
  CHECK(BuildOptions().real_type<double>().define("WG", 64).str() == "-DREAL=double -DREAL_IS_DOUBLE=1 -DWG=64");
}
