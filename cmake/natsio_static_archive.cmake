# Writes the static library programs link: cargo's libnatsio.a reduced to
# one object holding the C API and what it reaches. Run as a script:
#
#   cmake -DIN=<cargo's libnatsio.a> -DOUT=<archive to write>
#         -DLINKER=ld -DREADELF=readelf -DOBJCOPY=objcopy -DAR=ar
#         -P natsio_static_archive.cmake
#
# Why: cargo's archive holds every object of the Rust standard library and
# of each dependency, whole. A program whose link has no --gc-sections
# takes every object it touches with everything in it, and Go's cgo is such
# a link (cgo refuses -Wl,--gc-sections in #cgo and pkg-config flags): a Go
# program carried about 1.3 MB more code, 0.6-1.1 MB more of it resident.
# `ld -r --gc-sections` with the exported natsio_* functions as roots keeps
# only what they reach, once, for every linker. Sections stay separate
# (-r keeps .text.<name> apart), so a link with --gc-sections can still
# drop what its program does not call.
#
# The embedded LLVM bitcode (.llvmbc, .llvmcmd) is left out: no linker
# here reads it, and binutils' LLVM plugin fails on bitcode newer than
# itself when ar or nm index the archive.

foreach(var IN ITEMS IN OUT LINKER READELF OBJCOPY AR)
  if(NOT ${var})
    message(FATAL_ERROR "natsio_static_archive.cmake: -D${var}= is required")
  endif()
endforeach()

# The exported functions an archive or object defines (readelf, not nm:
# nm hands the objects to the LLVM plugin, which reads no symbols from them).
function(natsio_exported_functions file out_var)
  execute_process(COMMAND "${READELF}" -sW "${file}"
                  OUTPUT_VARIABLE symbols_text
                  COMMAND_ERROR_IS_FATAL ANY)
  string(REGEX MATCHALL "FUNC +GLOBAL +DEFAULT +[0-9]+ natsio_[A-Za-z0-9_]+" found "${symbols_text}")
  list(TRANSFORM found REPLACE ".* " "")
  list(REMOVE_DUPLICATES found)
  list(SORT found)
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

# The roots: every natsio_* function of cargo's archive.
natsio_exported_functions("${IN}" exported)
if(NOT exported)
  message(FATAL_ERROR "natsio_static_archive.cmake: no natsio_* function in ${IN}")
endif()
list(TRANSFORM exported PREPEND "--undefined=" OUTPUT_VARIABLE roots)

get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
set(object "${out_dir}/natsio.o")
execute_process(COMMAND "${LINKER}" -r --gc-sections ${roots}
                        --whole-archive "${IN}" --no-whole-archive -o "${object}"
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${OBJCOPY}" --remove-section=.llvmbc --remove-section=.llvmcmd "${object}"
                COMMAND_ERROR_IS_FATAL ANY)
# The object must still define every function of the C API.
natsio_exported_functions("${object}" kept)
if(NOT kept STREQUAL exported)
  list(REMOVE_ITEM exported ${kept})
  message(FATAL_ERROR "natsio_static_archive.cmake: the reduced object lost ${exported}")
endif()
file(REMOVE "${OUT}")
execute_process(COMMAND "${AR}" rcs "${OUT}" "${object}" COMMAND_ERROR_IS_FATAL ANY)
file(REMOVE "${object}")
