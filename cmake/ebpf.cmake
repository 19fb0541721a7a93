# The eBPF source on Linux (src/sources/live/ebpf_source.cpp): its program,
# src/sources/live/ebpf/file_io.bpf.c, compiled by clang for the BPF target
# against vmlinux.h (the running kernel's types, dumped from its BTF by
# bpftool; CO-RE relocates them where it runs), and a skeleton made by
# bpftool that the source includes and links with libbpf. Without clang,
# bpftool, libbpf or the kernel's BTF, etwaudit is built without the source
# and says so here (and `collect --source ebpf` says so too).
set(ebpf_missing "")
if(NOT ETWAUDIT_EBPF)
  set(ebpf_missing "ETWAUDIT_EBPF is OFF")
elseif(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(ebpf_missing "the program knows the x86-64 system calls only")
else()
  find_program(ETWAUDIT_CLANG NAMES clang clang-16 clang-15 clang-14)
  find_program(ETWAUDIT_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
  find_package(PkgConfig)
  if(PkgConfig_FOUND)
    pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
  endif()
  set(ETWAUDIT_KERNEL_BTF "/sys/kernel/btf/vmlinux" CACHE FILEPATH "the kernel BTF that vmlinux.h is made from")
  if(NOT ETWAUDIT_CLANG)
    set(ebpf_missing "no clang (apt install clang)")
  elseif(NOT ETWAUDIT_BPFTOOL)
    set(ebpf_missing "no bpftool (apt install bpftool)")
  elseif(NOT LIBBPF_FOUND)
    set(ebpf_missing "no libbpf (apt install libbpf-dev)")
  elseif(NOT EXISTS "${ETWAUDIT_KERNEL_BTF}")
    set(ebpf_missing "this kernel has no BTF (${ETWAUDIT_KERNEL_BTF})")
  endif()
endif()

if(ebpf_missing)
  message(STATUS "etwaudit: built without the eBPF source: ${ebpf_missing}")
  target_sources(etwaudit_core PRIVATE src/sources/live/ebpf_source_none.cpp)
  return()
endif()

set(ebpf_dir "${CMAKE_CURRENT_BINARY_DIR}/ebpf")
set(ebpf_source "${CMAKE_CURRENT_SOURCE_DIR}/src/sources/live/ebpf/file_io.bpf.c")
file(MAKE_DIRECTORY "${ebpf_dir}")
add_custom_command(
  OUTPUT "${ebpf_dir}/vmlinux.h"
  COMMAND "${ETWAUDIT_BPFTOOL}" btf dump file "${ETWAUDIT_KERNEL_BTF}" format c > "${ebpf_dir}/vmlinux.h"
  COMMENT "vmlinux.h from the kernel's BTF"
  VERBATIM)
add_custom_command(
  OUTPUT "${ebpf_dir}/file_io.bpf.o"
  COMMAND "${ETWAUDIT_CLANG}" -g -O2 -Wall -target bpf -D__TARGET_ARCH_x86 -I "${ebpf_dir}"
          -I "${CMAKE_CURRENT_SOURCE_DIR}/src/sources/live/ebpf" ${LIBBPF_CFLAGS} -c "${ebpf_source}"
          -o "${ebpf_dir}/file_io.bpf.o"
  DEPENDS "${ebpf_source}" "${CMAKE_CURRENT_SOURCE_DIR}/src/sources/live/ebpf/records.h" "${ebpf_dir}/vmlinux.h"
  COMMENT "the eBPF program"
  VERBATIM)
add_custom_command(
  OUTPUT "${ebpf_dir}/file_io.skel.h"
  COMMAND "${ETWAUDIT_BPFTOOL}" gen skeleton "${ebpf_dir}/file_io.bpf.o" name file_io > "${ebpf_dir}/file_io.skel.h"
  DEPENDS "${ebpf_dir}/file_io.bpf.o"
  COMMENT "the eBPF program's skeleton"
  VERBATIM)
add_custom_target(etwaudit_ebpf_skeleton DEPENDS "${ebpf_dir}/file_io.skel.h")
add_dependencies(etwaudit_core etwaudit_ebpf_skeleton)
target_sources(etwaudit_core PRIVATE src/sources/live/ebpf_source.cpp)
target_include_directories(etwaudit_core PRIVATE "${ebpf_dir}")
target_link_libraries(etwaudit_core PUBLIC PkgConfig::LIBBPF)
message(STATUS "etwaudit: with the eBPF source (${ETWAUDIT_CLANG}, ${ETWAUDIT_BPFTOOL}, libbpf ${LIBBPF_VERSION})")
