#pragma once
// Reading the fields of the tuning layer's JSON records (device profiles, autotuning records):
// each field must be there and of its type, or IoError names it. Whether a value is plausible is
// the records' own validation, not this reader's.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat::detail {

class JsonFields {
 public:
  /// `what` names the record in messages ("device profile"), `where` the object inside it.
  JsonFields(const nlohmann::json& object, std::string what, std::string where = {})
      : object_(object), what_(std::move(what)), where_(std::move(where)) {
    if (!object_.is_object()) fail("is not an object");
  }

  double number(const char* key) const {
    const nlohmann::json& value = field(key);
    if (!value.is_number()) fail(std::string("'") + key + "' is not a number");
    return value.get<double>();
  }
  std::size_t count(const char* key) const {
    const nlohmann::json& value = field(key);
    if (!value.is_number_unsigned()) fail(std::string("'") + key + "' = " + value.dump() + " is not a whole number");
    return static_cast<std::size_t>(value.get<std::uint64_t>());
  }
  std::string text(const char* key) const {
    const nlohmann::json& value = field(key);
    if (!value.is_string()) fail(std::string("'") + key + "' is not a string");
    return value.get<std::string>();
  }
  bool flag(const char* key) const {
    const nlohmann::json& value = field(key);
    if (!value.is_boolean()) fail(std::string("'") + key + "' is not true or false");
    return value.get<bool>();
  }
  const nlohmann::json& array(const char* key) const {
    const nlohmann::json& value = field(key);
    if (!value.is_array()) fail(std::string("'") + key + "' is not a list");
    return value;
  }
  JsonFields object(const char* key) const { return JsonFields(field(key), what_, where_ + "." + key); }
  /// An element of a list, named `name` in messages.
  JsonFields element(const nlohmann::json& value, const std::string& name) const { return JsonFields(value, what_, name); }

  [[noreturn]] void fail(const std::string& problem) const {
    throw IoError(what_ + (where_.empty() ? "" : " " + where_) + ": " + problem);
  }

 private:
  const nlohmann::json& field(const char* key) const {
    const auto found = object_.find(key);
    if (found == object_.end()) fail(std::string("'") + key + "' is missing");
    return *found;
  }

  const nlohmann::json& object_;
  std::string what_, where_;
};

}  // namespace ziggurat::detail
