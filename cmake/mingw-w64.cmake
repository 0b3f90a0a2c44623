# CMake toolchain for Windows x64 with Debian's MinGW-w64 cross compiler (the POSIX threads
# variant: std::thread and std::mutex need it with GCC 12). Used by scripts/windows-build.sh,
# which builds every library sagebuild links into the prefix named by SAGEBUILD_WINDOWS_PREFIX
# (an environment variable, so that CMake's try_compile projects see it too).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

# Headers, libraries and CMake packages from the MinGW sysroot and the prefix only, never from
# the Linux host; programs (pkg-config, python) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 "$ENV{SAGEBUILD_WINDOWS_PREFIX}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Static archives only: the executables must run from one file.
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)

# pkg-config reads the prefix's .pc files and the sysroot's (zlib), nothing of the host's.
set(ENV{PKG_CONFIG_LIBDIR} "$ENV{SAGEBUILD_WINDOWS_PREFIX}/lib/pkgconfig:/usr/x86_64-w64-mingw32/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
