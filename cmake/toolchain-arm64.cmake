# linux/arm64 cross build (scripts/release): Debian's g++-aarch64-linux-gnu (its glibc and
# libstdc++ under /usr/aarch64-linux-gnu) and the arm64 libraries of cmake/arm64-sysroot, passed
# as -DICHOR_ARM64_SYSROOT=DIR. Programs (protoc, grpc_cpp_plugin) are the host's: the sysroot
# holds the same Debian versions, so the generated code matches its runtime. The binaries run
# here under Debian's qemu-user-static (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ICHOR_ARM64_SYSROOT)
if(NOT ICHOR_ARM64_SYSROOT OR NOT EXISTS "${ICHOR_ARM64_SYSROOT}/done")
  message(FATAL_ERROR "-DICHOR_ARM64_SYSROOT=$(cmake/arm64-sysroot) is needed")
endif()
set(CMAKE_FIND_ROOT_PATH "${ICHOR_ARM64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The arm64 headers with an architecture (OpenSSL's configuration, say) and without; the cross
# compiler's own glibc headers come after them.
set(_ichor_inc "-isystem ${ICHOR_ARM64_SYSROOT}/usr/include/aarch64-linux-gnu -isystem ${ICHOR_ARM64_SYSROOT}/usr/include")
set(CMAKE_C_FLAGS_INIT "${_ichor_inc}")
set(CMAKE_CXX_FLAGS_INIT "${_ichor_inc}")
set(ENV{PKG_CONFIG_LIBDIR} "${ICHOR_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${ICHOR_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${ICHOR_ARM64_SYSROOT}")
find_program(_ICHOR_QEMU qemu-aarch64-static)
if(_ICHOR_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${_ICHOR_QEMU}")
endif()
