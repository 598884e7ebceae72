#!/usr/bin/env bash
# Can this host build the ARM wheels and run the emulated smoke tests? Run by tools/test.sh
# before tools/wheels.sh and tools/test-arm.sh ARCH --smoke. Prints nothing and exits 0 when
# it can; otherwise prints why not (one line per missing thing) and exits 1.
# What they need: root (apt-get for qemu-user-static, mmdebstrap, ...; mount binfmt_misc;
# chroot; unshare of the mount and network namespaces), a kernel with binfmt_misc, apt-get
# or the packages already there, and host CPython 3.11 and 3.13 (PATH, pyenv, or
# LGEMBED_PYTHON311 / LGEMBED_PYTHON313).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
why=()
if [ "$(id -u)" != 0 ]; then
  why+=("not root (uid $(id -u)): installing qemu-user-static/mmdebstrap, mounting binfmt_misc, chroot and unshare need root")
else
  if [ ! -d /proc/sys/fs/binfmt_misc ] && ! grep -qw binfmt_misc /proc/filesystems 2>/dev/null; then
    why+=("the kernel has no binfmt_misc (CONFIG_BINFMT_MISC): qemu-user cannot run foreign binaries transparently")
  fi
  unshare -m -n true 2>/dev/null || why+=("unshare -m -n fails: no mount/network namespaces (the offline install runs in one)")
fi
command -v apt-get >/dev/null || { command -v mmdebstrap >/dev/null && command -v qemu-aarch64-static >/dev/null; } \
  || why+=("no apt-get, and mmdebstrap/qemu-user-static are not installed")
for v in 3.11 3.13; do
  var=LGEMBED_PYTHON${v/./}
  found=""
  for c in "${!var:-}" "$(command -v "python$v" 2>/dev/null)" "$HOME"/.pyenv/versions/"$v".*/bin/"python$v" /usr/bin/"python$v"; do
    [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import sys, venv' 2>/dev/null && { found=$c; break; }
  done
  [ -n "$found" ] || why+=("no host CPython $v to run setuptools for the cp${v/./} wheels (set $var)")
done
[ ${#why[@]} -eq 0 ] && exit 0
printf '%s\n' "${why[@]}"
exit 1
