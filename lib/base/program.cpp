#include "ziggurat/base/program.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/embedded_kernels.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

namespace ziggurat {

namespace {

constexpr std::string_view kPrologue = "prologue";

const detail::EmbeddedKernel* find_embedded(std::string_view name, bool part) {
  for (const auto& kernel : detail::embedded_kernels()) {
    if (name == kernel.name && kernel.part == part) return &kernel;
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

// The part that `line` includes (`#include "folder/NAME.cl"`: the folder, which lets
// check-layers.py find the file, does not matter here), or "" for any other line.
std::string_view included_part(std::string_view line) {
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos || line.substr(start, 10) != "#include \"") return {};
  const std::size_t end = line.find(".cl\"", start + 10);
  if (end == std::string_view::npos) return {};
  std::string_view path = line.substr(start + 10, end - start - 10);
  return path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
}

// `text` of kernel file `file` with each part it includes in place of its #include line, once per
// program (`included` holds the parts already in it) and with the parts that part includes.
std::string with_parts(const std::string& text, std::string_view file, std::vector<std::string>& included) {
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line(text.data() + begin, end - begin);
    const std::string_view part = included_part(line);
    if (part.empty()) {
      out.append(line);
    } else if (std::find(included.begin(), included.end(), part) == included.end()) {
      const detail::EmbeddedKernel* embedded = find_embedded(part, true);
      if (embedded == nullptr) {
        throw InvalidArgument("kernel file '" + std::string(file) + ".cl' includes '" + std::string(part) +
                              ".cl', which is no embedded kernel part");
      }
      included.emplace_back(part);
      out += with_parts(file_text(*embedded), part, included);
    }
    out += '\n';
    begin = end + 1;
  }
  if (!text.empty() && text.back() != '\n') out.pop_back();  // no newline the file lacks
  return out;
}

}  // namespace

std::vector<std::string> embedded_kernel_names() {
  std::vector<std::string> names;
  for (const auto& kernel : detail::embedded_kernels()) {
    if (!kernel.part) names.emplace_back(kernel.name);
  }
  return names;
}

std::string kernel_source(std::string_view name) {
  const detail::EmbeddedKernel* embedded = find_embedded(name, false);
  if (embedded == nullptr) {
    std::string known;
    for (const auto& kernel_name : embedded_kernel_names()) known += " " + kernel_name;
    throw InvalidArgument("'" + std::string(name) + "' is not an embedded kernel family; known:" + known);
  }
  std::vector<std::string> included;
  const std::string prologue = with_parts(file_text(*find_embedded(kPrologue, true)), kPrologue, included);
  return prologue + "\n" + with_parts(file_text(*embedded), name, included);
}

}  // namespace ziggurat
