# Shared by tools/wheels.sh and tools/test-arm.sh (sourced, not run): the cache, the Debian
# mirror, host packages, the tool venvs and the per-architecture names.
# Everything downloaded or built once lives under $CACHE, so a second run is fast.
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CACHE=${LGEMBED_WHEELS_CACHE:-$HOME/.cache/lgembed-wheels}
# Why the Debian archive: it is the only source of target headers, sysconfig and root
# filesystems reachable here (no container registry, no python-build-standalone).
MIRROR=${LGEMBED_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CYTHON_VERSION=3.3.1
SETUPTOOLS_VERSION=84.2.1
# Cython generates the C once (sdist); setuptools is pinned because the cross recipe
# relies on how its distutils reads CC/LDSHARED/CPPFLAGS (CFLAGS would *replace* the
# target's flags, CPPFLAGS is appended).
mkdir -p "$CACHE"

log() { printf '\n== %s ==\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# apt_ensure PKG...: installs the Debian packages that are missing (apt-get update once).
apt_ensure() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# find_python VERSION: prints a host CPython X.Y interpreter (env override, PATH, pyenv).
find_python() {
  local v=$1 var="LGEMBED_PYTHON${1/./}" c
  if [ -n "${!var:-}" ]; then echo "${!var}"; return; fi
  for c in "$(command -v "python$v" 2>/dev/null || true)" "$HOME"/.pyenv/versions/"$v".*/bin/"python$v" /usr/bin/"python$v"; do
    [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import sys, venv' 2>/dev/null && { echo "$c"; return; }
  done
  return 1
}

# tool_venv NAME PYTHON REQ...: a venv under $CACHE, (re)created when its requirements change.
tool_venv() {
  local name=$1 py=$2; shift 2
  local dir=$CACHE/$name stamp
  stamp="$("$py" -VV | tr -d '\n') $*"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then return 0; fi
  log "tool venv $name ($("$py" -V 2>&1): $*)"
  rm -rf "$dir"
  "$py" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check -U pip 2>&1 | grep -v "^WARNING: Location" || true
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" 2>&1 | grep -v "^WARNING: Location" || true
  "$dir/bin/python" -c "import setuptools" || die "tool venv $name: install failed"
  echo "$stamp" > "$dir/.stamp"
}

# arch_vars ARCH: sets DARCH (Debian), TRIPLET, ZIGTARGET, PLAT, ELFMACH for a wheel arch.
arch_vars() {
  case $1 in
    x86_64)  DARCH=amd64 TRIPLET=x86_64-linux-gnu       ZIGTARGET="x86_64-linux-gnu.2.17"  PLAT=linux-x86_64 ;;
    aarch64) DARCH=arm64 TRIPLET=aarch64-linux-gnu      ZIGTARGET="aarch64-linux-gnu.2.17" PLAT=linux-aarch64 ;;
    armv7l)  DARCH=armhf TRIPLET=arm-linux-gnueabihf    ZIGTARGET="arm-linux-gnueabihf.2.17 -mcpu=generic+v7a+vfp3d16+thumb_mode" PLAT=linux-armv7l ;;
    *) die "unknown architecture '$1' (aarch64, armv7l or x86_64)" ;;
  esac
}
# armv7l: ARMv7-A, VFPv3-D16, hard float: Debian armhf's baseline (Pi 2/3/4/5, Zero 2, i.MX6,
# AM335x); not ARMv6 (Pi 1, Zero, Zero W). Compiled as Thumb-2 like Debian's own armhf
# packages (a third less code than ARM mode); linked without thumb_mode, because zig then
# builds its libc stubs in Thumb mode and their syscall asm fails ("reserved register R7").

# suite_of PYVER: the Debian release whose libpython matches (bookworm 3.11, trixie 3.13).
suite_of() {
  case $1 in 3.11) echo bookworm ;; 3.13) echo trixie ;; *) die "no Debian suite for Python $1" ;; esac
}

# find_zig: sets ZIG, the zig binary of PyPI's ziglang in the tools311 venv (tools/wheels.sh
# creates it), and keeps zig's cache under $CACHE
find_zig() {
  ZIG=$("$CACHE/tools311/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))') \
    || die "no ziglang in $CACHE/tools311: run bash tools/wheels.sh first"
  export ZIG ZIG_GLOBAL_CACHE_DIR=$CACHE/zig ZIG_LOCAL_CACHE_DIR=$CACHE/zig
}

# xbuild VENV PYVER ARCH SRC OUT LOG: one wheel of a setuptools project for one target.
xbuild() {
  local venv=$1 pyver=$2 arch=$3 src=$4 out=$5 logf=$6
  arch_vars "$arch"
  local cc="$ZIG cc -target $ZIGTARGET"
  local envs=(CC="$cc" LDSHARED="$ZIG cc -target ${ZIGTARGET%+thumb_mode} -shared" AR="$ZIG ar" LDFLAGS="-s" LGEMBED_EXTENSIONS=required)
  if [ "$arch" = x86_64 ]; then
    envs+=(CPPFLAGS="-g0")
  else
    local sr=$CACHE/sysroot-$(suite_of "$pyver")-$DARCH
    # CPPFLAGS, not CFLAGS: CFLAGS would replace the target's -O2 -fwrapv...; -idirafter so
    # zig's own glibc 2.17 headers win and only Python's headers come from the sysroot
    envs+=(_PYTHON_SYSCONFIGDATA_NAME="_sysconfigdata__linux_$TRIPLET" PYTHONPATH="$CACHE/xsys-$pyver-$DARCH"
           _PYTHON_HOST_PLATFORM="$PLAT" CPPFLAGS="-idirafter $sr/usr/include -g0")
  fi
  mkdir -p "$out"
  (cd "$src" && rm -rf build && env "${envs[@]}" "$CACHE/$venv/bin/python" -m build --wheel --no-isolation \
     --skip-dependency-check --outdir "$out" .) > "$logf" 2>&1 || { tail -30 "$logf" >&2; return 1; }
}


# source_key: a digest of what goes into the sdist (the tree's tracked and untracked,
# not ignored files under setup.py, pyproject.toml, lgembed/, cext/) and of the recipe.
# tools/wheels.sh keys its cache on it and writes it to dist/.source-key; tools/test-arm.sh
# warns when the tree has moved on since (its tests would run against older wheels).
source_key() {
  (cd "$ROOT" && { git ls-files -z --cached --others --exclude-standard -- setup.py pyproject.toml lgembed cext \
     | sort -z | xargs -0 sha256sum 2>/dev/null; sha256sum tools/wheels.sh tools/arm/common.sh
     echo "$CYTHON_VERSION $SETUPTOOLS_VERSION"; } | sha256sum | cut -c1-16)
}
