#!/usr/bin/env bash
# Builds Ferry's KDE Purpose plugin (plugins/kde-purpose) into build/kde-purpose when its build
# dependencies are installed, and says in one line that it skipped it when they are not: the rest
# of Ferry builds and installs without it. `make` calls this after the Swift build.
#
#   scripts/build-kde-plugin.sh [--with-driver]   --with-driver: also the tests' purpose-driver
#
# The compiler flags come from the environment (CPPFLAGS, CXXFLAGS, LDFLAGS), so the Debian package's
# build gets dpkg-buildflags' hardening, _FORTIFY_SOURCE included, as any CMake project does.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/kde-purpose"
driver=
[[ ${1-} == --with-driver ]] && driver=ON

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v c++ >/dev/null || missing+=(g++)
command -v pkg-config >/dev/null || missing+=(pkgconf)
[[ -e /usr/share/ECM/cmake/ECMConfig.cmake ]] || missing+=(extra-cmake-modules)
pkg-config --exists Qt5DBus 2>/dev/null || missing+=(qtbase5-dev)
compgen -G "/usr/lib/*/cmake/KF5KIO/KF5KIOConfig.cmake" >/dev/null || missing+=(libkf5kio-dev)
compgen -G "/usr/lib/*/cmake/KF5Purpose/KF5PurposeConfig.cmake" >/dev/null || missing+=(libkf5purpose-dev)
if ((${#missing[@]})); then
    echo "KDE Purpose plugin not built (for KDE's Share menu, install ${missing[*]})"
    # An older build must not be installed, or tested, as if it were this one's.
    rm -f "$build/ferryplugin.so" "$build/purpose-driver"
    exit 0
fi

# Configured once, and again when the driver is asked for or the flags changed (a build with the driver
# keeps it); CMake rebuilds what changed. A configure that failed is tried again from scratch.
flags=$(echo ${CPPFLAGS-} ${CXXFLAGS-})  # as CMake keeps it: no spaces at either end
configured=false
[[ -f $build/Makefile && -f $build/CMakeCache.txt ]] && configured=true
grep -qxF "CMAKE_CXX_FLAGS:STRING=$flags" "$build/CMakeCache.txt" 2>/dev/null || configured=false
[[ $driver == ON ]] && ! grep -qx "FERRY_PURPOSE_DRIVER:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null && configured=false
if ! $configured; then
    mkdir -p "$build"
    cmake -S "$root/plugins/kde-purpose" -B "$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS="$flags" ${driver:+-DFERRY_PURPOSE_DRIVER=ON} > "$build/configure.log" ||
        { cat "$build/configure.log" >&2; rm -f "$build/CMakeCache.txt" "$build/Makefile"; exit 1; }
fi
cmake --build "$build"
