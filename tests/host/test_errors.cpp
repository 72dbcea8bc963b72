// Error translation: OpenCL codes to exception classes and messages that say what to do.

#include <doctest/doctest.h>

#include "ziggurat/base/error.hpp"

using namespace ziggurat;

TEST_CASE("OpenCL error codes have their symbolic names") {
  CHECK(cl_error_name(CL_SUCCESS) == "CL_SUCCESS");
  CHECK(cl_error_name(CL_OUT_OF_RESOURCES) == "CL_OUT_OF_RESOURCES");
  CHECK(cl_error_name(CL_INVALID_KERNEL_ARGS) == "CL_INVALID_KERNEL_ARGS");
  CHECK(cl_error_name(-72) == "CL_MAX_SIZE_RESTRICTION_EXCEEDED");  // OpenCL 3.0, beyond our 1.2 headers
  CHECK(cl_error_name(-1001) == "CL_PLATFORM_NOT_FOUND_KHR");
  CHECK(cl_error_name(-9999) == "unknown OpenCL error -9999");
}

TEST_CASE("check() passes success and throws the matching class otherwise") {
  CHECK_NOTHROW(check(CL_SUCCESS, "clFinish"));

  try {
    check(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clEnqueueWriteBuffer", "uploading the grid");
    FAIL("check did not throw");
  } catch (const OutOfDeviceMemory& error) {
    CHECK(error.code() == CL_MEM_OBJECT_ALLOCATION_FAILURE);
    CHECK(error.call() == "clEnqueueWriteBuffer");
    const std::string text = error.what();
    CHECK(text.find("clEnqueueWriteBuffer failed with CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)") != std::string::npos);
    CHECK(text.find("while uploading the grid") != std::string::npos);
    CHECK(text.find("make the problem smaller") != std::string::npos);
  }

  CHECK_THROWS_AS(check(CL_INVALID_BUFFER_SIZE, "clCreateBuffer"), OutOfDeviceMemory);

  try {
    check(CL_INVALID_KERNEL_ARGS, "clEnqueueNDRangeKernel");
    FAIL("check did not throw");
  } catch (const OutOfDeviceMemory&) {
    FAIL("CL_INVALID_KERNEL_ARGS is not a memory problem");
  } catch (const OpenCLError& error) {
    CHECK(error.code() == CL_INVALID_KERNEL_ARGS);
    CHECK(std::string(error.what()).find("report it") != std::string::npos);
  }
}

TEST_CASE("every ziggurat exception is a ziggurat::Error and a std::runtime_error") {
  CHECK_THROWS_AS(check(CL_OUT_OF_RESOURCES, "clFinish"), Error);
  CHECK_THROWS_AS(check(CL_OUT_OF_RESOURCES, "clFinish"), std::runtime_error);
  CHECK_THROWS_AS(throw OutOfDeviceMemory("too big"), OpenCLError);
  CHECK_THROWS_AS(throw InvalidArgument("x"), Error);
  CHECK_THROWS_AS(throw DeviceNotFound("x"), Error);
  CHECK_THROWS_AS(throw UnsupportedFeature("x"), Error);
  CHECK_THROWS_AS(throw IoError("x"), Error);
  CHECK_THROWS_AS(throw BuildError("p", "", "d", "", ""), Error);
}

TEST_CASE("a build error carries the log and shows the offending source lines") {
  const std::string source = "line one\nline two\nline three uses y\nline four\nline five\nline six\n";
  const BuildError error("heat2d", "-DREAL=float", "Some GPU [Some Platform]",
                         "<source>:3:12: error: use of undeclared identifier 'y'", source);
  CHECK(error.program() == "heat2d");
  CHECK(error.options() == "-DREAL=float");
  CHECK(error.source() == source);
  const std::string text = error.what();
  CHECK(text.find("program 'heat2d' failed to build for Some GPU [Some Platform]") != std::string::npos);
  CHECK(text.find("options '-DREAL=float'") != std::string::npos);
  CHECK(text.find("undeclared identifier 'y'") != std::string::npos);
  CHECK(text.find(">    3 | line three uses y") != std::string::npos);
  CHECK(text.find("     1 | line one") != std::string::npos);
  CHECK(text.find("line six") == std::string::npos);  // only two lines of context

  const BuildError silent("k", "", "d", "", "x");
  CHECK(std::string(silent.what()).find("the driver gave no log") != std::string::npos);
}
