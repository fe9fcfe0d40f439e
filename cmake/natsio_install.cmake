# Install rules: `cmake --install <build> --prefix <prefix>` puts
#
#   lib/libnatsio.so.<version>            the shared library (SONAME libnatsio.so.<major>)
#   lib/libnatsio.so.<major>, .so         symlinks to it (runtime and link-time names)
#   lib/libnatsio.a                       the static library (NATSIO_STATIC_ARCHIVE),
#                                         debug info stripped
#     (macOS: libnatsio.<version>.dylib, install name @rpath/libnatsio.<major>.dylib;
#      Windows: bin/natsio.dll, lib/natsio.dll.lib, lib/natsio.lib)
#   include/natsio.h                      the C API (with NATSIO_VERSION_* macros)
#   include/natsio_sys.h                  binding support (includes natsio.h)
#   include/natsio/*.hpp                  the C++ binding (one include dir for both)
#   lib/cmake/natsio/                     find_package(natsio): natsio::natsio,
#                                         natsio::natsio_static, natsio::cpp
#   lib/pkgconfig/natsio.pc, natsio-static.pc
#
# Over cargo's output rather than cargo-c: cargo-c would have to be built
# from source on every fresh machine (minutes, hundreds of crates), while
# CMake is already here for the C/C++ side and writes the CMake package
# itself; what cargo-c adds (SONAME, version, .pc) is a few lines here and
# in build.rs.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The names of the installed shared library, per platform (build.rs gives
# the library the same SONAME / install name): the file itself, the
# runtime name programs record, and the link-time name.
set(natsio_stage "${CMAKE_CURRENT_BINARY_DIR}/natsio-install")
file(MAKE_DIRECTORY "${natsio_stage}")
if(WIN32)
  # No versioned names: the DLL goes beside programs (bin), its import
  # library and the static library into lib.
  install(FILES "${NATSIO_BUILT_LIB_DIR}/${NATSIO_SHARED_FILE}"
          DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
  install(FILES "${NATSIO_BUILT_LIB_DIR}/${NATSIO_LINK_FILE}"
                "${NATSIO_STATIC_ARCHIVE}"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT development)
  set(NATSIO_INSTALLED_SHARED_PROPERTIES
      "IMPORTED_LOCATION \"\${PACKAGE_PREFIX_DIR}/${CMAKE_INSTALL_BINDIR}/${NATSIO_SHARED_FILE}\"
    IMPORTED_IMPLIB \"\${NATSIO_LIBRARY_DIR}/${NATSIO_LINK_FILE}\"")
else()
  if(APPLE)
    set(natsio_so_real "libnatsio.${PROJECT_VERSION}.dylib")
    set(natsio_so_major "libnatsio.${PROJECT_VERSION_MAJOR}.dylib")
    set(natsio_soname "@rpath/${natsio_so_major}")
  else()
    set(natsio_so_real "libnatsio.so.${PROJECT_VERSION}")
    set(natsio_so_major "libnatsio.so.${PROJECT_VERSION_MAJOR}")
    set(natsio_soname "${natsio_so_major}")
  endif()
  # The library is cargo's file; the versioned name and its symlinks are
  # made here and installed as they are (symlinks stay symlinks).
  file(CREATE_LINK "${natsio_so_real}" "${natsio_stage}/${natsio_so_major}" SYMBOLIC)
  file(CREATE_LINK "${natsio_so_major}" "${natsio_stage}/${NATSIO_SHARED_FILE}" SYMBOLIC)
  install(FILES "${NATSIO_BUILT_LIB_DIR}/${NATSIO_SHARED_FILE}"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}" RENAME "${natsio_so_real}"
          PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                      WORLD_READ WORLD_EXECUTE
          COMPONENT runtime)
  install(FILES "${natsio_stage}/${natsio_so_major}"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime)
  install(FILES "${natsio_stage}/${NATSIO_SHARED_FILE}" "${NATSIO_STATIC_ARCHIVE}"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT development)
  set(NATSIO_INSTALLED_SHARED_PROPERTIES
      "IMPORTED_LOCATION \"\${NATSIO_LIBRARY_DIR}/${natsio_so_real}\"
    IMPORTED_SONAME \"${natsio_soname}\"")
endif()
# The Rust standard library's objects in the archive carry their debug
# info (three quarters of its size): users of a release get it stripped.
if(CMAKE_STRIP AND NOT MSVC)
  install(CODE "execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
                \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/${NATSIO_STATIC_FILE}\"
                COMMAND_ERROR_IS_FATAL ANY)"
          COMPONENT development)
endif()

install(FILES "${NATSIO_INCLUDE_DIR}/natsio.h" "${NATSIO_INCLUDE_DIR}/natsio_sys.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT development)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/bindings/cpp/include/natsio"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT development
        FILES_MATCHING PATTERN "*.hpp")

# CMake package.
set(natsio_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/natsio")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/natsioConfig.cmake.in"
  "${natsio_stage}/natsioConfig.cmake"
  INSTALL_DESTINATION "${natsio_cmake_dir}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
# 0.x: a minor release may break the ABI, as the SONAME and
# natsio_version_compatible() say; from 1.0 on, a major release.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(natsio_compat SameMinorVersion)
else()
  set(natsio_compat SameMajorVersion)
endif()
write_basic_package_version_file("${natsio_stage}/natsioConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY ${natsio_compat})
install(FILES "${natsio_stage}/natsioConfig.cmake" "${natsio_stage}/natsioConfigVersion.cmake"
        DESTINATION "${natsio_cmake_dir}" COMPONENT development)

# pkg-config: relocatable (the prefix is found from the .pc file's place).
file(RELATIVE_PATH natsio_pc_to_prefix
     "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" natsio_pc_to_prefix "${natsio_pc_to_prefix}")
foreach(pc IN ITEMS natsio natsio-static)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in" "${natsio_stage}/${pc}.pc" @ONLY)
  install(FILES "${natsio_stage}/${pc}.pc"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT development)
endforeach()
