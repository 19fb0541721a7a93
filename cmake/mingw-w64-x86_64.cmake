# Cross-compiling for 64-bit Windows with Debian's mingw-w64 (tools/build-windows.sh).
#
# The -posix compilers: the default "win32" thread model of mingw-w64 has no
# std::thread or std::mutex. Everything links statically (libstdc++,
# libwinpthread, libgcc) so the executables run on Windows and under Wine
# without extra DLLs. Tests run under Wine's 64-bit loader; ctest prefixes
# every test command with CMAKE_CROSSCOMPILING_EMULATOR.

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(ETWAUDIT_MINGW_PREFIX x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${ETWAUDIT_MINGW_PREFIX}-gcc-posix)
set(CMAKE_CXX_COMPILER ${ETWAUDIT_MINGW_PREFIX}-g++-posix)
set(CMAKE_RC_COMPILER ${ETWAUDIT_MINGW_PREFIX}-windres)

# Headers and libraries come only from the mingw sysroot and the build tree,
# never from /usr/include or /usr/lib of the host.
set(CMAKE_FIND_ROOT_PATH /usr/${ETWAUDIT_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# Wine runs the tests; WINEPREFIX and the running wineserver come from the
# caller's environment (tools/build-windows.sh sets them up).
if(NOT DEFINED CMAKE_CROSSCOMPILING_EMULATOR AND EXISTS /usr/lib/wine/wine64)
  set(CMAKE_CROSSCOMPILING_EMULATOR /usr/lib/wine/wine64)
endif()
