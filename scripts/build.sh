#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/build.sh [BUILDDIR] [CONFIGURE-ARGS...] - bootstrap and build out
# of tree (default _build).  Reconfigures only when needed.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
b=${1:-_build}
[ $# -gt 0 ] && shift
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi >/dev/null
mkdir -p "$b"
cd "$b"
want="$*"
if [ ! -f Makefile ] || [ "$(cat .nx-configure-args 2>/dev/null)" != "$want" ]; then
	"$top/configure" -q "$@"
	echo "$want" > .nx-configure-args
fi
make -j"$(nproc)" >/dev/null
