#!/bin/sh
# setup.sh - install calltrace's build and test dependencies from Debian 12 packages.
# Idempotent: packages already present are skipped; apt-get runs only when one is missing.
set -eu

PKGS="build-essential g++ cmake pkg-config libdw-dev libelf-dev libcapstone-dev check \
libjson-c-dev erlang-base valgrind"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "setup: all dependencies present"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
echo "setup: installing$missing"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
