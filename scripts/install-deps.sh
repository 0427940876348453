#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/install-deps.sh - install every build, run and test dependency from
# Debian's packages (and playwright-core from npm for the browser tests).
# Idempotent: already-installed packages are left alone.
set -eu
cd "$(dirname "$0")/.."

PKGS="build-essential autoconf automake libtool pkg-config git ca-certificates
libmicrohttpd-dev libjansson-dev libsqlite3-dev sqlite3 zlib1g-dev
libprotobuf-c-dev protobuf-c-compiler libssl-dev libcurl4-openssl-dev
curl wrk python3 python3-torch python3-numpy chromium nodejs npm clang"

SUDO=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: run as root (no sudo found)" >&2; exit 1; }
	SUDO=sudo
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# nodejs from another source may already provide npm
if command -v npm >/dev/null 2>&1; then
	missing=$(echo "$missing" | tr ' ' '\n' | grep -vx npm | grep -vx nodejs | tr '\n' ' ')
fi
if [ -n "$(echo "$missing" | tr -d ' ')" ]; then
	echo "install-deps: installing$missing"
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi

if [ -f tests/browser/package.json ] && [ ! -d tests/browser/node_modules/playwright-core ]; then
	echo "install-deps: npm packages for the browser tests"
	(cd tests/browser && { npm ci --no-audit --no-fund || npm install --no-audit --no-fund; })
fi
