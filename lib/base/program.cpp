#include "ziggurat/base/program.hpp"

#include <cstdlib>
#include <filesystem>

#include "base/embedded_kernels.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

namespace ziggurat {

namespace {

constexpr std::string_view kPrologue = "prologue";

const detail::EmbeddedKernel* find_embedded(std::string_view name) {
  for (const auto& kernel : detail::embedded_kernels()) {
    if (name == kernel.name) return &kernel;
  }
  return nullptr;
}

// The text of one embedded file, or of its replacement in ZIGGURAT_KERNEL_DIR.
std::string file_text(const detail::EmbeddedKernel& embedded) {
  const char* folder = std::getenv("ZIGGURAT_KERNEL_DIR");
  if (folder == nullptr || *folder == '\0') return embedded.source;
  const auto path = std::filesystem::path(folder) / (std::string(embedded.name) + ".cl");
  try {
    const auto bytes = read_file(path);
    return std::string(bytes.begin(), bytes.end());
  } catch (const IoError& error) {
    throw IoError(std::string(error.what()) + " (ZIGGURAT_KERNEL_DIR is set; unset it to use the embedded kernels)");
  }
}

}  // namespace

std::vector<std::string> embedded_kernel_names() {
  std::vector<std::string> names;
  for (const auto& kernel : detail::embedded_kernels()) {
    if (kernel.name != kPrologue) names.emplace_back(kernel.name);
  }
  return names;
}

std::string kernel_source(std::string_view name) {
  const detail::EmbeddedKernel* embedded = name == kPrologue ? nullptr : find_embedded(name);
  if (embedded == nullptr) {
    std::string known;
    for (const auto& kernel_name : embedded_kernel_names()) known += " " + kernel_name;
    throw InvalidArgument("'" + std::string(name) + "' is not an embedded kernel family; known:" + known);
  }
  return file_text(*find_embedded(kPrologue)) + "\n" + file_text(*embedded);
}

}  // namespace ziggurat
