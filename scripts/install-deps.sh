#!/bin/sh
# Installs what grip needs to build and test on Debian 12 / Ubuntu 24.04 (run as root). Installs nothing that is
# already there. The CUDA toolkit is optional: without nvcc the build makes a CPU-only plugin.
set -e
# valgrind: CI's memcheck of grip-host (scripts/ci-sanitize.sh; the sanitizers themselves come with gcc);
# clang, libclang-rt-dev, llvm: the libFuzzer harnesses (scripts/fuzz-short.sh); python3-numpy, python3-pytest:
# the Python package's tests; libopenmpi-dev, openmpi-bin: grip-host's sharded index (GRIP_WITH_MPI) and its test
pkgs="build-essential cmake pkg-config check libsubunit-dev liblzf-dev zlib1g-dev abigail-tools valgrind
      clang libclang-rt-dev llvm python3-numpy python3-pytest libopenmpi-dev openmpi-bin"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing
fi
