# Read by cpack when it runs (CPACK_PROJECT_CONFIG_FILE). A binary with crash
# points aborts when CDC2DORIS_CRASH_AT names one of them: such a binary is
# never packaged as the real thing. Package the release preset instead.
if(CPACK_CDC2DORIS_CRASH_POINTS)
  if(NOT "$ENV{CDC2DORIS_PACKAGE_TEST_BUILD}" STREQUAL "1")
    message(FATAL_ERROR
      "This build has crash points compiled in (CDC2DORIS_CRASH_POINTS=ON); it is a test build, not a "
      "package to ship. Package the release preset: cmake --preset release && cmake --build --preset "
      "release --target cdc2doris && cpack --preset release. (Tests set CDC2DORIS_PACKAGE_TEST_BUILD=1 "
      "to package it anyway as version ${CPACK_PACKAGE_VERSION}~testbuild.)")
  endif()
  # "~" sorts before the empty string: the real package of this version upgrades it.
  set(CPACK_PACKAGE_VERSION "${CPACK_PACKAGE_VERSION}~testbuild")
  set(CPACK_DEBIAN_PACKAGE_VERSION "${CPACK_PACKAGE_VERSION}")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CPACK_PACKAGE_DESCRIPTION_SUMMARY} (TEST BUILD with crash points)")
endif()
