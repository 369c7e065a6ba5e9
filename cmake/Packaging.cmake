# Install rules and the Debian package (cpack -G DEB). The shippable package is
# built from the release preset (crash points compiled out):
#   cmake --preset release && cmake --build --preset release --target cdc2doris
#   cpack --preset release                    # build/release/cdc2doris_<version>_<arch>.deb
# A build with crash points (dev, asan, tsan) packages only when asked to by
# CDC2DORIS_PACKAGE_TEST_BUILD=1 in the environment, and then as version
# <version>~testbuild, which any real package of that version replaces: the
# package install test (tests/deploy/deb_package_test.sh) uses the dev build's
# binary so it does not need a second full build. See cmake/CPackProjectConfig.cmake.
include(GNUInstallDirs)

install(TARGETS cdc2doris RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The unit and the example config are installed where the package puts them,
# whatever the prefix: ExecStart names /usr/bin/cdc2doris and
# /etc/cdc2doris/cdc2doris.yaml.
install(FILES deploy/systemd/cdc2doris.service DESTINATION /lib/systemd/system)
install(FILES deploy/examples/cdc2doris.yaml DESTINATION /etc/cdc2doris RENAME cdc2doris.yaml.example)
install(FILES README.md docs/getting-started.md docs/operations.md docs/configuration.md docs/architecture.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES deploy/examples/cdc2doris.yaml deploy/examples/docker.yaml
              deploy/prometheus/cdc2doris-rules.yaml deploy/grafana/cdc2doris-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cdc2doris)
set(CPACK_PACKAGE_VENDOR "cdc2doris")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Debezium change events from Kafka into Apache Doris, exactly once")
set(CPACK_PACKAGE_DESCRIPTION
    "A standalone daemon that reads Debezium JSON change records from Kafka and loads them into Apache Doris with Stream Load two-phase commit, checkpointed in RocksDB, so every change is applied exactly once. Ships the cdc2doris binary, a systemd unit (not enabled) and an example configuration in /etc/cdc2doris.")
set(CPACK_PACKAGE_CONTACT "cdc2doris maintainers <cdc2doris@localhost>" CACHE STRING "Debian Maintainer field")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends is derived from the binary's shared libraries by dpkg-shlibdeps
# (dpkg-dev), not listed by hand; tzdata is read at run time (time zones);
# the Cyrus SASL GSSAPI plugin is loaded by librdkafka at run time for
# sasl.mechanism GSSAPI (Kerberos), which no ELF dependency shows; kinit
# (krb5-user) renews tickets from a keytab (docs/operations.md "Security").
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "tzdata, libsasl2-modules-gssapi-mit | libsasl2-modules-gssapi-heimdal")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates, krb5-user")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/CPackProjectConfig.cmake)
set(CPACK_CDC2DORIS_CRASH_POINTS ${CDC2DORIS_CRASH_POINTS})
include(CPack)
