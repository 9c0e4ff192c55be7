#!/usr/bin/env bash
# install-chromium.sh
#
# Installs headless Chromium from the distribution's packages (Debian: chromium and chromium-driver)
# for the console's browser test (test/e2e/console_test.go), and prints the browser's path on
# stdout. Idempotent: when a Chromium is already on PATH (or CHROMIUM names one) nothing is
# installed, so a re-run takes a few milliseconds. Installing needs root and apt-get; anywhere else
# it says what to install and exits 1.
set -euo pipefail

log() { echo "[install-chromium $(date +%H:%M:%S)] $*" >&2; }

for c in "${CHROMIUM:-}" chromium chromium-browser; do
	[ -n "$c" ] || continue
	if p=$(command -v "$c" 2>/dev/null); then
		echo "$p"
		exit 0
	fi
done

if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
	log "no Chromium on PATH and no root apt-get to install it: install your distribution's chromium package (or set CHROMIUM to a Chromium binary)"
	exit 1
fi
log "installing chromium and chromium-driver from the distribution's packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >&2
command -v chromium
