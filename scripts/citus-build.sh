#!/usr/bin/env bash
# Builds and installs Citus (a test dependency, never shipped) for PostgreSQL 15 from the
# vendored source, unless citus.so is already in that PostgreSQL's pkglibdir: that
# installed library is the cache a rerun finds. Installs the build's apt packages first
# when they are missing (CI's fresh machine has none of them). Source and objects stay in
# a temporary directory, never in the repo. (gcc is also what test/helpers/slow-disk.ts
# compiles its library with.)
#   scripts/citus-build.sh            build when missing
#   scripts/citus-build.sh --force    rebuild even when installed
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
vendor="${PGSURGE_VENDOR_DIR:-$repo/../shared/vendor}"
tarball="$vendor/citus-12.1.12.tar.gz"
sha256="c66b8c6544a6f7e55fbbcca55258c6f9ad91d3486bb7404bb883b689f39ecc86"
pg_config=/usr/lib/postgresql/15/bin/pg_config
apt_deps=(gcc make postgresql-server-dev-15 liblz4-dev libzstd-dev libkrb5-dev libssl-dev libcurl4-openssl-dev)

force=0
[[ "${1:-}" == "--force" ]] && force=1

missing=()
# The server too, when the machine has none (the Citus tests run on it).
[[ -x /usr/lib/postgresql/15/bin/postgres ]] || missing+=(postgresql-15)
for p in "${apt_deps[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "citus-build: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
fi

pkglibdir="$("$pg_config" --pkglibdir)"
if (( !force )) && [[ -f "$pkglibdir/citus.so" ]]; then
  echo "citus-build: $pkglibdir/citus.so is installed (cached); --force rebuilds"
  exit 0
fi

if [[ ! -f "$tarball" ]]; then
  echo "citus-build: $tarball is missing" >&2
  exit 1
fi
actual="$(sha256sum "$tarball" | cut -d' ' -f1)"
if [[ "$actual" != "$sha256" ]]; then
  echo "citus-build: $tarball has sha256 $actual, expected $sha256" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar xzf "$tarball" -C "$work"
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)"
cd "$src"
start=$SECONDS
./configure -q PG_CONFIG="$pg_config" >/dev/null
# with_llvm=no: no JIT bitcode (a second compile of every file with clang, for a JIT the tests never use).
make -s -j"$(nproc)" with_llvm=no >/dev/null
make -s install with_llvm=no >/dev/null
echo "citus-build: installed citus into $pkglibdir in $((SECONDS - start)) s"
