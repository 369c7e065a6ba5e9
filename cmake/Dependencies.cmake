# Every dependency is a Debian 12 package installed by scripts/setup.
find_package(Threads REQUIRED)
find_package(Boost 1.81.0 EXACT REQUIRED CONFIG COMPONENTS system iostreams json)
find_package(OpenSSL REQUIRED)
find_package(ZLIB REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
find_package(RocksDB REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(simdjson REQUIRED)
find_package(date REQUIRED)
find_package(absl CONFIG REQUIRED)  # time zones: the tz file incl. its POSIX footer rule
if(CDC2DORIS_TESTS)
  find_package(Catch2 2 REQUIRED)  # Debian 12 ships Catch2 v2; the release build needs no test framework
endif()
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)

# Asio and Beast are compiled once, in cdc2doris_asio, instead of in every
# translation unit that includes them (saves minutes on a 2-core machine).
add_compile_definitions(
  BOOST_ASIO_SEPARATE_COMPILATION
  BOOST_BEAST_SEPARATE_COMPILATION
  BOOST_ASIO_NO_DEPRECATED
  BOOST_JSON_NO_LIB)
