# ICHOR_STATIC_GRPC: link the C++ dependencies from Debian's static archives, for cold start.
#
# A tool dynamically linked to Debian's gRPC, protobuf and abseil maps about sixty shared objects
# and runs 16 000 symbol relocations before main: `kubectl ichor inspect --help` took 17.5 ms
# against 1.1 ms for a C hello-world, 5.7 ms linked from the archives (bench/HISTORY.md, "the
# linking", has the figures, docs/design.md "Linking" the decision). What this switches to static:
#   - gRPC (grpc++, grpc, gpr, upb, address_sorting), protobuf, abseil, c-ares, re2;
#   - OpenSSL and zlib, which gRPC calls (1.6 ms more when dynamic);
#   - yaml-cpp and libstdc++/libgcc, so that no C++ shared library is left in the process;
# and it leaves dynamic: glibc, libjq (Debian ships no archive; opened on the first --jq) and
# libcurl with its many dependencies (the Kubernetes client; a tool that does not call it drops it
# through the toolchain's default --as-needed).
#
# --exclude-libs,ALL keeps the archives' symbols out of an executable's dynamic symbol table: a
# tool that also loads libcurl gets libcurl's own OpenSSL (libssl.so.3), untouched by the static
# copy gRPC uses; no OpenSSL object passes between the two (common/kube does not use OpenSSL).
#
# Included after Dependencies.cmake: it rewrites the imported targets that find_package made,
# so the libraries' CMakeLists.txt stay as they are. OFF gives the plain dynamic build.
#
# One compile switch belongs to the same measurement, though it is not linking: cxxopts 3.1 builds
# its std::regex patterns in static constructors, once per translation unit that includes it,
# 1.7 ms of every start; CXXOPTS_NO_REGEX selects its hand-written parser.
option(ICHOR_CXXOPTS_NO_REGEX "build cxxopts without std::regex (cold start)" ON)
if(ICHOR_CXXOPTS_NO_REGEX AND TARGET cxxopts::cxxopts)
  set_property(TARGET cxxopts::cxxopts APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS CXXOPTS_NO_REGEX)
endif()

option(ICHOR_STATIC_GRPC "link gRPC, protobuf, abseil, OpenSSL, yaml-cpp and libstdc++ statically" ON)
if(NOT ICHOR_STATIC_GRPC)
  return()
endif()

# _ichor_archive_of(OUT LOCATION): the static archive beside a shared library, or "".
function(_ichor_archive_of out location)
  set(${out} "" PARENT_SCOPE)
  if(location MATCHES "^(.*/lib[^/]+)\\.so(\\.[0-9.]+)?$")
    # ${CMAKE_MATCH_1} is expanded before an if() runs: test the file in a second one.
    set(candidate "${CMAKE_MATCH_1}.a")
    if(EXISTS "${candidate}")
      set(${out} "${candidate}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

# _ichor_use_archive(TARGET): points an imported library at its archive, in every
# configuration it was imported with. Returns quietly when there is no archive.
function(_ichor_use_archive target)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(SHARED|UNKNOWN)_LIBRARY$")
    return()
  endif()
  get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
  set(props IMPORTED_LOCATION)
  if(configs)
    foreach(c IN LISTS configs)
      list(APPEND props IMPORTED_LOCATION_${c})
    endforeach()
  endif()
  foreach(p IN LISTS props)
    get_target_property(loc ${target} ${p})
    if(loc)
      _ichor_archive_of(archive "${loc}")
      if(archive)
        set_property(TARGET ${target} PROPERTY ${p} "${archive}")
      endif()
    endif()
  endforeach()
endfunction()

get_directory_property(_ichor_imported IMPORTED_TARGETS)
foreach(t IN LISTS _ichor_imported)
  if(t MATCHES "^(absl|gRPC|protobuf|c-ares|OpenSSL|ZLIB)::" OR t STREQUAL "yaml-cpp")
    _ichor_use_archive(${t})
  endif()
endforeach()

# re2 comes from pkg-config as "-L... -lre2" on an interface target.
find_library(_ICHOR_RE2_ARCHIVE NAMES libre2.a)
if(TARGET re2::re2 AND _ICHOR_RE2_ARCHIVE)
  set_property(TARGET re2::re2 PROPERTY INTERFACE_LINK_LIBRARIES "${_ICHOR_RE2_ARCHIVE}")
endif()
# What the OpenSSL archive needs from the C library.
if(TARGET OpenSSL::Crypto)
  set_property(TARGET OpenSSL::Crypto APPEND PROPERTY INTERFACE_LINK_LIBRARIES
               Threads::Threads ${CMAKE_DL_LIBS})
endif()

add_link_options("$<$<LINK_LANGUAGE:CXX>:-static-libstdc++;-static-libgcc>"
                 "LINKER:--exclude-libs,ALL")
