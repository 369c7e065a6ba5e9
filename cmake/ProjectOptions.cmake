# Warnings apply to our targets only (third-party headers come in as SYSTEM).
add_library(cdc2doris_options INTERFACE)
target_compile_options(cdc2doris_options INTERFACE -Wall -Wextra -Werror)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports false -Wrestrict positives inside std::string at -O2/-O3
  # (GCC bug 105329) and warns that TSan does not model Asio's
  # atomic_thread_fence (-Wtsan); neither is about our code.
  target_compile_options(cdc2doris_options INTERFACE -Wno-restrict -Wno-tsan)
endif()
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

# cdc2doris_tsan_c11_threads(target): in ThreadSanitizer builds, compile into
# an executable the shim that routes librdkafka's C11 threads through TSan's
# pthread interceptors (core/kafka/tsan_c11_threads.cpp says why). Every
# executable that loads librdkafka needs it, the daemon included, or its
# first librdkafka thread crashes in TSan's allocator.
function(cdc2doris_tsan_c11_threads target)
  if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=thread")
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/core/kafka/tsan_c11_threads.cpp)
  endif()
endfunction()
