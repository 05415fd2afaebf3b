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
find_package(Catch2 REQUIRED)

# libjq has no CMake or pkg-config file in Debian.
find_library(JQ_LIBRARY jq REQUIRED)
find_path(JQ_INCLUDE_DIR jq.h REQUIRED)
add_library(jq::jq UNKNOWN IMPORTED)
set_target_properties(jq::jq PROPERTIES IMPORTED_LOCATION ${JQ_LIBRARY}
                      INTERFACE_INCLUDE_DIRECTORIES ${JQ_INCLUDE_DIR})

find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
