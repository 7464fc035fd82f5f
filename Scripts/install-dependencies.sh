#!/usr/bin/env bash
# Installs the system packages FakeAPNs builds and tests with, when they are missing:
# OpenSSL 3 headers (libssl-dev), pkg-config, and the openssl command line.
# Idempotent and quiet when everything is there already.
set -euo pipefail

missing=()
pkg-config --exists openssl 2>/dev/null || missing+=(libssl-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)

if ((${#missing[@]} == 0)); then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "FakeAPNs needs: ${missing[*]} (Debian package names); install them with your package manager." >&2
    exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    SUDO=(sudo)
fi
echo "Installing ${missing[*]}" >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
