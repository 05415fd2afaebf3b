# One place for the warning set: every target of the project gets it through ichor_warnings.
add_library(ichor_warnings INTERFACE)
target_compile_options(ichor_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(ICHOR_WERROR)
  target_compile_options(ichor_warnings INTERFACE -Werror)
endif()
