# Sourced by tools/test.sh: installs the Debian packages the suite needs, once.
# A package already installed costs nothing; a missing one is installed with apt-get
# (CI runs as root on a fresh machine). Not root and something missing: say what and
# go on (the tests that need it then fail or skip with that reason).
set -euo pipefail
_SYSTEM_PACKAGES=(
  systemd            # systemd-analyze verify/security for `lgembed unit` (tests/test_unit.py)
  util-linux         # unshare: the disk-full test mounts a small tmpfs in a private namespace
  make
  gcc
  gcc-multilib       # the firmware bridge's 32-bit host build (-m32)
  gcc-arm-none-eabi  # the firmware bridge's Cortex-M builds
  libnewlib-arm-none-eabi
  clang              # libFuzzer: a short fuzz run of the bridge's C decoder
  libclang-rt-14-dev # (Debian 12's clang-14 keeps libFuzzer here)
)
_missing=()
for _p in "${_SYSTEM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$_p" 2>/dev/null | grep -q "install ok installed" || _missing+=("$_p")
done
if [ ${#_missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian packages the tests need: ${_missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${_missing[@]}" >/dev/null
  else
    echo "warning: missing Debian packages (install them as root): ${_missing[*]}" >&2
  fi
fi
