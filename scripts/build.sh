#!/bin/bash
# Configures and builds the project into ./build (or $BUILD_DIR).  Extra
# arguments go to the configure step, e.g. scripts/build.sh -DJVMPI_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
echo "build: configure $BUILD_DIR $*"
cmake -S . -B "$BUILD_DIR" "$@"
echo "build: compile $BUILD_DIR"
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "build: done, layer at $BUILD_DIR/lib/libjvmpi.so"
