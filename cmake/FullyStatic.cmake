# ICHOR_FULLY_STATIC: executables that depend on nothing but the kernel (issue 24), for the
# release archives (scripts/release builds build-static/ and build-arm64/ with it).
#
# On top of ICHOR_STATIC_GRPC (gRPC, protobuf, abseil, c-ares, re2, OpenSSL, zlib, yaml-cpp,
# libstdc++ from Debian's archives) this links
#   - libcurl, libjq and libonig from ICHOR_STATIC_DEPS_PREFIX, the archives that cmake/static-deps
#     builds from Debian's source packages (Debian ships libcurl.a only with its thirty
#     dependencies, and no libjq.a): libcurl speaks HTTP and HTTPS through OpenSSL and resolves
#     names with c-ares, which reads /etc/hosts and /etc/resolv.conf itself;
#   - glibc, as a static PIE (-static-pie: the executable keeps address-space randomisation).
# Name resolution never reaches glibc's NSS (whose modules a static binary cannot load from
# another glibc): gRPC resolves with c-ares (its default when built with it, as Debian's is),
# libcurl with c-ares, and the suite calls no getpw*/getaddrinfo of its own. libjq is linked
# (common/doc/jq.cpp, ICHOR_JQ_LINKED) instead of opened with dlopen.
option(ICHOR_FULLY_STATIC "link every executable fully statically (release archives)" OFF)
if(NOT ICHOR_FULLY_STATIC)
  return()
endif()
if(NOT ICHOR_STATIC_GRPC)
  message(FATAL_ERROR "ICHOR_FULLY_STATIC needs ICHOR_STATIC_GRPC=ON")
endif()
set(ICHOR_STATIC_DEPS_PREFIX "" CACHE PATH "cmake/static-deps --print-prefix (libcurl, libjq, libonig)")
foreach(a libcurl.a libjq.a libonig.a)
  if(NOT EXISTS "${ICHOR_STATIC_DEPS_PREFIX}/lib/${a}")
    message(FATAL_ERROR "ICHOR_FULLY_STATIC: no ${ICHOR_STATIC_DEPS_PREFIX}/lib/${a} (run cmake/static-deps)")
  endif()
endforeach()

# Compile lines stay those of build/ (ccache then serves build-static/ from build/'s objects):
# the rebuilt libcurl and libjq have the same version as Debian's headers in /usr/include, so
# only the link changes; a cross build, which has no curl headers in its sysroot, takes the
# rebuilt ones.
set_target_properties(CURL::libcurl PROPERTIES
  IMPORTED_LOCATION "${ICHOR_STATIC_DEPS_PREFIX}/lib/libcurl.a"
  INTERFACE_LINK_LIBRARIES "c-ares::cares;OpenSSL::SSL;OpenSSL::Crypto;ZLIB::ZLIB;Threads::Threads")
if(CMAKE_CROSSCOMPILING)
  set_target_properties(CURL::libcurl PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ICHOR_STATIC_DEPS_PREFIX}/include")
  set_target_properties(jq::headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ICHOR_STATIC_DEPS_PREFIX}/include")
endif()
get_target_property(_ichor_curl_configs CURL::libcurl IMPORTED_CONFIGURATIONS)
foreach(c IN LISTS _ichor_curl_configs)
  if(c)
    set_property(TARGET CURL::libcurl PROPERTY IMPORTED_LOCATION_${c}
                 "${ICHOR_STATIC_DEPS_PREFIX}/lib/libcurl.a")
  endif()
endforeach()

# libjq: linked, with the regular-expression engine it calls; jq.cpp alone is compiled with
# ICHOR_JQ_LINKED (ichor_fully_static_sources, called after common/ is added).
set_property(TARGET jq::headers APPEND PROPERTY INTERFACE_LINK_LIBRARIES
  "${ICHOR_STATIC_DEPS_PREFIX}/lib/libjq.a;${ICHOR_STATIC_DEPS_PREFIX}/lib/libonig.a;m")
function(ichor_fully_static_sources)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/common/doc/jq.cpp
               DIRECTORY ${CMAKE_SOURCE_DIR}/common/doc
               APPEND PROPERTY COMPILE_DEFINITIONS ICHOR_JQ_LINKED)
endfunction()

# -static-pie refuses a shared object, so a dependency without an archive fails the link instead
# of slipping in; scripts/release checks the result with readelf -d all the same.
# Without -static-libstdc++ and -static-libgcc (StaticGrpc.cmake's): the driver wraps them in
# -Bstatic ... -Bdynamic, and the -Bdynamic after them would link libm and libc as shared objects
# behind -static-pie (an executable with NEEDED libc.so.6 and no interpreter).
get_directory_property(_ichor_link_options LINK_OPTIONS)
list(FILTER _ichor_link_options EXCLUDE REGEX "static-lib(stdc\\+\\+|gcc)")
set_directory_properties(PROPERTIES LINK_OPTIONS "${_ichor_link_options}")
add_link_options("$<$<LINK_LANGUAGE:CXX>:-static-pie>")
# No RUNPATH: cmake/StaticGrpc.cmake points the SHARED imported targets at archives, and CMake
# still adds their folder as a runtime path when it is not an implicit one (the arm64 sysroot's).
# glibc's static-PIE start-up asserts that there is none (elf_get_dynamic_info,
# STATIC_PIE_BOOTSTRAP): every arm64 binary crashed in _dl_relocate_static_pie before main.
# scripts/release refuses a RUNPATH or RPATH.
set(CMAKE_SKIP_RPATH ON)
