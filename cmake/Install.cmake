# The installed suite: every kubectl-ichor* executable under tools/ and its man page.
#
# Included after add_subdirectory(tools). The tools are found in tools/'s folders rather than
# listed here, so that a new tool is installed and gets its page without an edit to this file.
# Each page is written at build time from the tool's own --help by scripts/help-to-man (the
# --help text is the one source; a page cannot drift from it) and rewritten whenever the tool
# is relinked.
#
#   cmake --install build --prefix DIR    DIR/bin/kubectl-ichor*, DIR/share/man/man1/kubectl-ichor*.1
#   target ichor-tools                    the executables and their pages (what scripts/release ships)
include(GNUInstallDirs)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(ICHOR_TOOLS)
get_property(_ichor_tool_dirs DIRECTORY ${CMAKE_SOURCE_DIR}/tools PROPERTY SUBDIRECTORIES)
foreach(_dir ${CMAKE_SOURCE_DIR}/tools ${_ichor_tool_dirs})
  get_property(_targets DIRECTORY ${_dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_t ${_targets})
    get_target_property(_type ${_t} TYPE)
    if(_type STREQUAL "EXECUTABLE" AND _t MATCHES "^kubectl-ichor(-[a-z]+)?$")
      list(APPEND ICHOR_TOOLS ${_t})
    endif()
  endforeach()
endforeach()
list(SORT ICHOR_TOOLS)

set(ICHOR_MAN_DIR ${CMAKE_BINARY_DIR}/man)
# A cross build (linux/arm64, cmake/toolchain-arm64.cmake) runs its tools under the emulator.
set(_ichor_emulator)
if(CMAKE_CROSSCOMPILING)
  if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
    message(FATAL_ERROR "a cross build writes its man pages from --help under an emulator: "
                        "qemu-user-static (CMAKE_CROSSCOMPILING_EMULATOR)")
  endif()
  list(GET CMAKE_CROSSCOMPILING_EMULATOR 0 _ichor_qemu)
  set(_ichor_emulator --emulator ${_ichor_qemu})
endif()
file(MAKE_DIRECTORY ${ICHOR_MAN_DIR})
set(_pages)
foreach(_t ${ICHOR_TOOLS})
  set(_page ${ICHOR_MAN_DIR}/${_t}.1)
  # The dispatcher's --help marks a verb whose binary is not next to it "(not installed)": its
  # page waits for every tool, so that the page lists them as installed.
  # Its page points to every verb's page; a verb's page points to it.
  set(_deps ${_t})
  set(_see kubectl-ichor)
  if(_t STREQUAL "kubectl-ichor")
    set(_deps ${ICHOR_TOOLS})
    set(_see ${ICHOR_TOOLS})
  endif()
  add_custom_command(
    OUTPUT ${_page}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/help-to-man $<TARGET_FILE:${_t}> ${_page}
            --version ${PROJECT_VERSION} ${_ichor_emulator} --see-also ${_see}
    DEPENDS ${_deps} ${CMAKE_SOURCE_DIR}/scripts/help-to-man
    COMMENT "Writing man page ${_t}.1 from ${_t} --help"
    VERBATIM)
  list(APPEND _pages ${_page})
endforeach()
add_custom_target(ichor-man ALL DEPENDS ${_pages})
add_custom_target(ichor-tools)
add_dependencies(ichor-tools ${ICHOR_TOOLS} ichor-man)

install(TARGETS ${ICHOR_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Completion through kubectl (1.26+): kubectl runs kubectl_complete-ichor from PATH for
# `kubectl ichor ...`, and kubectl_complete-ichor-VERB when kubectl-ichor-VERB is itself on PATH,
# as it is here. The one shim (completions/kubectl_complete-ichor) serves every name: it reads
# the verb from the name it was run by and asks kubectl-ichor __complete.
set(ICHOR_COMPLETION_SHIMS kubectl_complete-ichor)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/completions/kubectl_complete-ichor
        DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(_t ${ICHOR_TOOLS})
  if(_t MATCHES "^kubectl-ichor-([a-z]+)$")
    list(APPEND ICHOR_COMPLETION_SHIMS kubectl_complete-ichor-${CMAKE_MATCH_1})
    install(PROGRAMS ${CMAKE_SOURCE_DIR}/completions/kubectl_complete-ichor
            DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME kubectl_complete-ichor-${CMAKE_MATCH_1})
  endif()
endforeach()
