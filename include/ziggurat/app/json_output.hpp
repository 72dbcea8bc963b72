#pragma once
// The one form of every `--json` output of the CLI and the benchmarks: a JSON object that says
// which ziggurat wrote it ("ziggurat_version") and the layout of its keys and units ("schema",
// docs/vocabulary.md), so that a script can tell what it reads.

#include <nlohmann/json.hpp>
#include <string>

namespace ziggurat::app {

/// The layout of the JSON outputs: raised whenever a key is renamed or removed or its unit changes.
/// 1: the first versioned layout (time in *_s keys everywhere; docs/vocabulary.md lists the renames).
inline constexpr int kJsonSchema = 1;

/// `report` (an object; InvalidArgument otherwise) with "ziggurat_version" and "schema" added.
nlohmann::json versioned(nlohmann::json report);

/// versioned(report) as text, indented by `indent` spaces, with a final newline: what --json prints.
std::string json_output(const nlohmann::json& report, int indent = 2);

}  // namespace ziggurat::app
