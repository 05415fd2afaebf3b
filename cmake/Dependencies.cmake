# Every dependency comes from Debian's packages (scripts/setup installs them).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(cxxopts REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(CURL REQUIRED)
# zlib: libcurl links it already; common/cni inflates Helm release records with it.
find_package(ZLIB REQUIRED)
# OFF: the tools alone (the release's static and cross builds, scripts/demo's needs): no unit
# tests, golden tests or benchmarks, and neither Catch2 nor the shared libjq is looked for.
option(ICHOR_BUILD_TESTS "build the tests and benchmarks" ON)
if(ICHOR_BUILD_TESTS)
  find_package(Catch2 REQUIRED)
endif()

# libjq has no CMake or pkg-config file in Debian. The tools load it with dlopen on the first
# --jq (common/doc/jq.cpp says why), so the build uses only its headers; the library itself is
# required here because the tests run --jq.
if(ICHOR_BUILD_TESTS)
  find_library(JQ_LIBRARY jq REQUIRED)
endif()
find_path(JQ_INCLUDE_DIR jq.h REQUIRED)
add_library(jq::headers INTERFACE IMPORTED)
set_target_properties(jq::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${JQ_INCLUDE_DIR})

find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
