# What `cmake --install` lays out and what `cpack -G DEB` packs (docs/install.md).
# Three components, three Debian packages:
#   dev    -> relgraph-dev:   headers, static libraries, relgraphConfig.cmake and the .pc files
#             (relgraph, relgraph-client, relgraph-server, relgraph-cluster), for programs that
#             embed the engine, use the client, serve the protocol or route through a cluster;
#   server -> relgraph:       relgraphd, relgraph-cli, relgraph-admin, relgraph-bridge,
#             /etc/relgraph/relgraphd.conf, the systemd unit, its system user and the
#             maintainer scripts (debian/);
#   tools  -> relgraph-tools: relgraph-bench, which links hiredis and libpq (the designs it
#             compares against), so that the server package does not need them.
# Included from the top CMakeLists.txt, so CMAKE_CURRENT_SOURCE_DIR is the project's root.
include(CMakePackageConfigHelpers)

set(RELGRAPH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/relgraph)
set(RELGRAPH_PACKAGE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/tools/package)

# ---- dev: headers, libraries, CMake and pkg-config files ---------------------------------------
install(TARGETS ${RELGRAPH_EXPORTED_TARGETS} EXPORT relgraphTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/relgraph)
foreach(room engine net storage)
  install(DIRECTORY ${room} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/relgraph COMPONENT dev
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(EXPORT relgraphTargets NAMESPACE relgraph:: DESTINATION ${RELGRAPH_CMAKE_DIR}
        COMPONENT dev)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/relgraphConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/relgraphConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/relgraphConfigVersion.cmake
        DESTINATION ${RELGRAPH_CMAKE_DIR} COMPONENT dev)
# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}), so the same
# file is right under any prefix, the package's /usr included.
string(REGEX REPLACE "[^/]+" ".." RELGRAPH_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(RELGRAPH_PC_FILES relgraph relgraph-client relgraph-server)
# relgraph::cluster is built with the tools (it needs the NATS C client, libnats-dev); its
# users look NATS up too: relgraphConfig.cmake and relgraph-cluster.pc (Requires: libnats).
set(RELGRAPH_WITH_CLUSTER OFF)
if(TARGET relgraph_cluster)
  set(RELGRAPH_WITH_CLUSTER ON)
  list(APPEND RELGRAPH_PC_FILES relgraph-cluster)
endif()
configure_package_config_file(${RELGRAPH_PACKAGE_DIR}/relgraphConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/relgraphConfig.cmake INSTALL_DESTINATION ${RELGRAPH_CMAKE_DIR})
foreach(pc ${RELGRAPH_PC_FILES})
  configure_file(${RELGRAPH_PACKAGE_DIR}/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endforeach()

# ---- server: tools, configuration, systemd unit ------------------------------------------------
if(RELGRAPH_BUILD_TOOLS)
  install(TARGETS relgraphd relgraph-cli relgraph-admin relgraph-bridge
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
  install(TARGETS relgraph-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
  # Configuration goes to /etc under the /usr prefix (the package) and to <prefix>/etc under
  # any other, and the unit names the binary and the file where they landed: both are decided
  # when installing, when the prefix is known (cpack installs under /usr, see below).
  configure_file(${RELGRAPH_PACKAGE_DIR}/install_server_files.cmake.in
                 ${CMAKE_CURRENT_BINARY_DIR}/install_server_files.cmake @ONLY)
  install(SCRIPT ${CMAKE_CURRENT_BINARY_DIR}/install_server_files.cmake COMPONENT server)
  install(FILES README.md docs/install.md docs/protocol.md
          DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT server)
endif()

# ---- Debian packages: cpack -G DEB (from the build directory) ----------------------------------
set(CPACK_PACKAGE_NAME relgraph)
set(CPACK_PACKAGE_VENDOR "relgraph")
set(CPACK_PACKAGE_CONTACT "relgraph maintainers <relgraph@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Install under /usr with DESTDIR (not under a staging prefix), so that the server files'
# script sees the /usr prefix and puts the configuration in /etc.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL server tools dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_SERVER_PACKAGE_NAME relgraph)
set(CPACK_DEBIAN_SERVER_PACKAGE_SHLIBDEPS ON)  # libc6, libstdc++6, libxxhash0, liblz4-1, libnats
# The scripts stop and disable relgraphd on remove (tools/package/debian/, docs/install.md).
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    ${RELGRAPH_PACKAGE_DIR}/debian/postinst ${RELGRAPH_PACKAGE_DIR}/debian/prerm
    ${RELGRAPH_PACKAGE_DIR}/debian/postrm ${RELGRAPH_PACKAGE_DIR}/debian/conffiles)
set(CPACK_DEBIAN_SERVER_DESCRIPTION
    "relgraph server: relgraphd, relgraph-cli, relgraph-admin, relgraph-bridge,\n the systemd unit relgraphd.service and /etc/relgraph/relgraphd.conf.")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME relgraph-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS ON)  # adds libhiredis and libpq5 to the above
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION database)
set(CPACK_DEBIAN_TOOLS_DESCRIPTION
    "relgraph tools: relgraph-bench, the benchmark, embedded or against relgraphd, Redis\n and PostgreSQL (docs/benchmarks.md, docs/comparison.md).")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME relgraph-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libboost-dev (>= 1.74), libxxhash-dev, liblz4-dev, zlib1g-dev, libnats-dev, pkg-config")
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "relgraph engine and client: headers, static libraries, CMake package and pkg-config files.")
include(CPack)
