# The Rust library as CMake targets, for this tree and for projects that
# add_subdirectory() or FetchContent it:
#
#   natsio::natsio         the shared library (libnatsio.so, SONAME libnatsio.so.<major>;
#                          libnatsio.dylib on macOS, natsio.dll on Windows)
#   natsio::natsio_static  the static library and the system libraries it needs
#
# Both carry include/ (natsio.h). With NATSIO_LIB_DIR they import a prebuilt
# cargo output; without it, cargo builds the library during the build (a
# target every user of the library waits for; cargo itself decides what is
# out of date, so an unchanged tree costs one quick cargo call).

set(NATSIO_LIB_DIR "" CACHE PATH
    "Prebuilt libnatsio (cargo's target/<profile>); empty: cargo builds it")
set(NATSIO_CARGO_TARGET_DIR "${PROJECT_SOURCE_DIR}/target" CACHE PATH
    "cargo's target directory when cargo builds the library")
set(NATSIO_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/include")

# The library's file names and what the Rust standard library needs from
# the system when linked statically (`cargo rustc --release --lib
# --crate-type staticlib -- --print native-static-libs` on each platform),
# per platform; the .pc files and the installed CMake package say the same.
#   NATSIO_SHARED_FILE  what cargo writes (and the build tree loads)
#   NATSIO_LINK_FILE    what a program links against: the shared library,
#                       or on Windows its import library
#   NATSIO_STATIC_FILE  the static library
if(WIN32)
  set(NATSIO_SHARED_FILE "natsio.dll")
  set(NATSIO_LINK_FILE "natsio.dll.lib")
  set(NATSIO_STATIC_FILE "natsio.lib")
  set(NATSIO_STATIC_SYSTEM_LIBS advapi32 bcrypt crypt32 kernel32 ntdll secur32 userenv ws2_32)
elseif(APPLE)
  set(NATSIO_SHARED_FILE "libnatsio.dylib")
  set(NATSIO_LINK_FILE "libnatsio.dylib")
  set(NATSIO_STATIC_FILE "libnatsio.a")
  # rustls-native-certs reads the keychain through Security.framework.
  set(NATSIO_STATIC_SYSTEM_LIBS "-framework Security" "-framework CoreFoundation" iconv System c m)
else()
  set(NATSIO_SHARED_FILE "libnatsio.so")
  set(NATSIO_LINK_FILE "libnatsio.so")
  set(NATSIO_STATIC_FILE "libnatsio.a")
  if(CMAKE_SYSTEM_NAME MATCHES "BSD")
    set(NATSIO_STATIC_SYSTEM_LIBS execinfo pthread gcc_s c m rt util)
  else()
    set(NATSIO_STATIC_SYSTEM_LIBS gcc_s util rt pthread m dl)
  endif()
endif()
# The same as linker flags ("-lgcc_s -lutil ...", "-framework Security"),
# for the .pc files.
set(NATSIO_STATIC_SYSTEM_LIBS_FLAGS "")
foreach(lib IN LISTS NATSIO_STATIC_SYSTEM_LIBS)
  if(lib MATCHES "^-")
    list(APPEND NATSIO_STATIC_SYSTEM_LIBS_FLAGS "${lib}")
  else()
    list(APPEND NATSIO_STATIC_SYSTEM_LIBS_FLAGS "-l${lib}")
  endif()
endforeach()
list(JOIN NATSIO_STATIC_SYSTEM_LIBS_FLAGS " " NATSIO_STATIC_SYSTEM_LIBS_FLAGS)

if(NATSIO_LIB_DIR)
  if(NOT EXISTS "${NATSIO_LIB_DIR}/${NATSIO_SHARED_FILE}")
    message(FATAL_ERROR
      "libnatsio: ${NATSIO_LIB_DIR}/${NATSIO_SHARED_FILE} not found.\n"
      "Build it first with `cargo build --release`, point -DNATSIO_LIB_DIR "
      "at the cargo output holding it, or leave NATSIO_LIB_DIR empty to let "
      "the build run cargo.")
  endif()
  set(natsio_lib_dir "${NATSIO_LIB_DIR}")
else()
  find_program(NATSIO_CARGO cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin")
  if(NOT NATSIO_CARGO)
    message(FATAL_ERROR
      "libnatsio: cargo not found. Install Rust (https://rustup.rs), or build "
      "the library elsewhere and pass -DNATSIO_LIB_DIR=<its target/release>.")
  endif()
  set(natsio_lib_dir "${NATSIO_CARGO_TARGET_DIR}/release")
  add_custom_target(natsio_cargo_build
    COMMAND "${CMAKE_COMMAND}" -E env "CARGO_TARGET_DIR=${NATSIO_CARGO_TARGET_DIR}"
            "${NATSIO_CARGO}" build --release --manifest-path "${PROJECT_SOURCE_DIR}/Cargo.toml"
    BYPRODUCTS "${natsio_lib_dir}/${NATSIO_LINK_FILE}" "${natsio_lib_dir}/${NATSIO_STATIC_FILE}"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    COMMENT "cargo build --release (libnatsio)"
    USES_TERMINAL VERBATIM)
endif()
# Where the install rules find the library.
set(NATSIO_BUILT_LIB_DIR "${natsio_lib_dir}")

# INTERFACE libraries rather than IMPORTED ones: they can depend on the
# cargo target, so nothing links before cargo is done.
add_library(natsio_shared INTERFACE)
target_link_libraries(natsio_shared INTERFACE "${natsio_lib_dir}/${NATSIO_LINK_FILE}")
target_include_directories(natsio_shared INTERFACE "$<BUILD_INTERFACE:${NATSIO_INCLUDE_DIR}>")
add_library(natsio::natsio ALIAS natsio_shared)

# The static library programs link (NATSIO_STATIC_ARCHIVE): on ELF
# platforms with GNU ld, cargo's archive reduced to the C API and what it
# reaches, in <build>/natsio-static/ (natsio_static_archive.cmake says why;
# written by the build, so a program linking it through the uninstalled
# natsio-static.pc needs `cmake --build` first); elsewhere, or with
# -DNATSIO_REDUCED_STATIC_LIBRARY=OFF, cargo's archive as it is.
option(NATSIO_REDUCED_STATIC_LIBRARY
       "Link and install libnatsio.a reduced to the C API and what it reaches (ELF, GNU ld)" ON)
set(natsio_cargo_static "${natsio_lib_dir}/${NATSIO_STATIC_FILE}")
set(NATSIO_STATIC_ARCHIVE "${natsio_cargo_static}")
if(NATSIO_REDUCED_STATIC_LIBRARY AND NOT WIN32 AND NOT APPLE
   AND CMAKE_LINKER AND CMAKE_READELF AND CMAKE_OBJCOPY AND CMAKE_AR)
  execute_process(COMMAND "${CMAKE_LINKER}" --version OUTPUT_VARIABLE natsio_linker_version
                  ERROR_QUIET RESULT_VARIABLE natsio_linker_result)
  if(natsio_linker_result EQUAL 0 AND natsio_linker_version MATCHES "^GNU ld")
    set(NATSIO_STATIC_ARCHIVE "${PROJECT_BINARY_DIR}/natsio-static/${NATSIO_STATIC_FILE}")
  endif()
endif()
if(NOT NATSIO_STATIC_ARCHIVE STREQUAL natsio_cargo_static)
  set(natsio_static_archive_deps "${natsio_cargo_static}")
  if(TARGET natsio_cargo_build)
    list(APPEND natsio_static_archive_deps natsio_cargo_build)
  endif()
  add_custom_command(
    OUTPUT "${NATSIO_STATIC_ARCHIVE}"
    COMMAND "${CMAKE_COMMAND}" "-DIN=${natsio_cargo_static}" "-DOUT=${NATSIO_STATIC_ARCHIVE}"
            "-DLINKER=${CMAKE_LINKER}" "-DREADELF=${CMAKE_READELF}"
            "-DOBJCOPY=${CMAKE_OBJCOPY}" "-DAR=${CMAKE_AR}"
            -P "${CMAKE_CURRENT_LIST_DIR}/natsio_static_archive.cmake"
    DEPENDS ${natsio_static_archive_deps} "${CMAKE_CURRENT_LIST_DIR}/natsio_static_archive.cmake"
    COMMENT "libnatsio.a: the C API and what it reaches, one object"
    VERBATIM)
  add_custom_target(natsio_static_archive ALL DEPENDS "${NATSIO_STATIC_ARCHIVE}")
endif()
# The directory the .pc files and the install rules take it from.
get_filename_component(NATSIO_STATIC_ARCHIVE_DIR "${NATSIO_STATIC_ARCHIVE}" DIRECTORY)

find_package(Threads REQUIRED)
add_library(natsio_static INTERFACE)
target_link_libraries(natsio_static INTERFACE "${NATSIO_STATIC_ARCHIVE}"
                      Threads::Threads ${NATSIO_STATIC_SYSTEM_LIBS})
target_include_directories(natsio_static INTERFACE "$<BUILD_INTERFACE:${NATSIO_INCLUDE_DIR}>")
add_library(natsio::natsio_static ALIAS natsio_static)

if(TARGET natsio_cargo_build)
  add_dependencies(natsio_shared natsio_cargo_build)
  add_dependencies(natsio_static natsio_cargo_build)
endif()
if(TARGET natsio_static_archive)
  add_dependencies(natsio_static natsio_static_archive)
endif()

# Programs of this tree (and of a parent project) run from the build tree
# without install: the library's directory goes into their build RPATH.
list(APPEND CMAKE_BUILD_RPATH "${natsio_lib_dir}")

# <build>/pkgconfig/natsio.pc and natsio-static.pc for development in the
# tree (the Go binding's cgo flags come from pkg-config).
include("${CMAKE_CURRENT_LIST_DIR}/natsio_pkgconfig_uninstalled.cmake")
