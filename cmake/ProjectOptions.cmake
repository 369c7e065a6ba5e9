# Warnings apply to our targets only (third-party headers come in as SYSTEM).
add_library(cdc2doris_options INTERFACE)
target_compile_options(cdc2doris_options INTERFACE -Wall -Wextra -Werror)
target_include_directories(cdc2doris_options INTERFACE ${PROJECT_SOURCE_DIR})
if(CDC2DORIS_CRASH_POINTS)
  target_compile_definitions(cdc2doris_options INTERFACE CDC2DORIS_CRASH_POINTS=1)
endif()

# cdc2doris_add_library(name SOURCES ... [DEPS ...])
function(cdc2doris_add_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_link_libraries(${name} PUBLIC cdc2doris_options ${A_DEPS})
endfunction()
