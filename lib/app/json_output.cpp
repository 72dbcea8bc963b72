// Every --json output: the report with the version that wrote it and its schema.

#include "ziggurat/app/json_output.hpp"

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/version.hpp"

namespace ziggurat::app {

nlohmann::json versioned(nlohmann::json report) {
  if (!report.is_object())
    throw InvalidArgument("a --json output is a JSON object, not " + std::string(report.type_name()));
  report["ziggurat_version"] = ziggurat::version;
  report["schema"] = kJsonSchema;
  return report;
}

std::string json_output(const nlohmann::json& report, int indent) { return versioned(report).dump(indent) + "\n"; }

}  // namespace ziggurat::app
