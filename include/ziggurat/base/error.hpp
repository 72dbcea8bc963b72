#pragma once
// ziggurat's exception hierarchy. Every message says what failed and what the user can do.
//
//   Error                      base of everything ziggurat throws
//   ├─ InvalidArgument         a value the caller passed is out of range or malformed
//   ├─ DeviceNotFound          no OpenCL device matches the selection
//   ├─ UnsupportedFeature      the device lacks something required (e.g. fp64)
//   ├─ IoError                 a file could not be read or written, or is malformed
//   ├─ BuildError              an OpenCL program failed to compile (carries the build log)
//   ├─ ZeroPivot               a factorisation met a zero, tiny or NaN pivot (carries the block row)
//   └─ OpenCLError             an OpenCL call failed (carries the call and the error code)
//      └─ OutOfDeviceMemory    the device could not allocate memory

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ziggurat/base/opencl.hpp"

namespace ziggurat {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvalidArgument : public Error {
 public:
  using Error::Error;
};

class DeviceNotFound : public Error {
 public:
  using Error::Error;
};

class UnsupportedFeature : public Error {
 public:
  using Error::Error;
};

class IoError : public Error {
 public:
  using Error::Error;
};

class BuildError : public Error {
 public:
  BuildError(std::string program, std::string options, std::string device, std::string log,
             std::string source);
  const std::string& program() const noexcept { return program_; }
  const std::string& options() const noexcept { return options_; }
  const std::string& log() const noexcept { return log_; }
  const std::string& source() const noexcept { return source_; }

 private:
  std::string program_, options_, log_, source_;
};

class ZeroPivot : public Error {
 public:
  ZeroPivot(std::size_t block_row, const std::string& message) : Error(message), block_row_(block_row) {}
  std::size_t block_row() const noexcept { return block_row_; }

 private:
  std::size_t block_row_;
};

class OpenCLError : public Error {
 public:
  OpenCLError(cl_int code, std::string call, std::string_view context);
  cl_int code() const noexcept { return code_; }
  const std::string& call() const noexcept { return call_; }  ///< empty if no call was made

 protected:
  OpenCLError(const std::string& message, cl_int code);

 private:
  cl_int code_;
  std::string call_;
};

class OutOfDeviceMemory : public OpenCLError {
 public:
  using OpenCLError::OpenCLError;
  /// A request refused before any OpenCL call because it cannot fit; `message` says what.
  explicit OutOfDeviceMemory(const std::string& message);
};

/// The symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "unknown OpenCL error N".
std::string cl_error_name(cl_int code);

/// Throws the matching OpenCLError subclass when code != CL_SUCCESS. `call` names the OpenCL
/// function; `context` (optional) says what ziggurat was doing, e.g. "uploading the grid".
void check(cl_int code, const char* call, std::string_view context = {});

}  // namespace ziggurat
