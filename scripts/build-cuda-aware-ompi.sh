#!/usr/bin/env bash
# Issue 23 item 5: a CUDA-aware Open MPI for the GPU box, which reaches no registry. Run here (a
# machine that reaches deb.debian.org; CUDA headers at $CUDA, nvcc's toolkit): Debian's source of
# Open MPI 4.1.4 (the version CI uses), checked against the package's .dsc, configured
# --with-cuda (the smcuda BTL's CUDA IPC path between GPUs of one node, the CUDA convertor for
# derived types on device memory), built and installed, and packed as
# .ompi-cuda/openmpi-4.1.4-cuda.tar.xz (git-ignored) for `run --carry .ompi-cuda`; the box
# unpacks it in scripts/gpu-cuda-aware.sh, relocated with OPAL_PREFIX. Nothing is rebuilt where
# the archive exists. Fortran, OpenSHMEM, UCX, verbs and libfabric are left out: one node, C.
# Takes about 25 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.1.4
archive=.ompi-cuda/openmpi-$version-cuda.tar.xz
[[ -e $archive ]] && { echo "$archive exists"; exit 0; }
CUDA=${CUDA:-/usr/local/cuda}
work=${WORK:-build/ompi-cuda-src}
pool=http://deb.debian.org/debian/pool/main/o/openmpi
mkdir -p "$work" .ompi-cuda
work=$(cd "$work" && pwd)
tarball=openmpi_$version.orig.tar.xz
curl -fsS -o "$work/$tarball" "$pool/$tarball"
curl -fsS -o "$work/openmpi.dsc" "$pool/openmpi_$version-3.dsc"
want=$(awk -v f="$tarball" '/^Checksums-Sha256:/{s=1; next} s && $3==f {print $1; exit}' \
  "$work/openmpi.dsc")
got=$(sha256sum "$work/$tarball" | cut -d' ' -f1)
[[ -n $want && $want == "$got" ]] || { echo "checksum of $tarball: $got, .dsc says '$want'"; exit 1; }
rm -rf "$work/openmpi-$version" "$work/install"
tar -C "$work" -xf "$work/$tarball"
cd "$work/openmpi-$version"
./configure --prefix="$work/install" --with-cuda="$CUDA" --with-hwloc=internal \
  --with-libevent=internal --with-pmix=internal --without-ucx --without-verbs --without-ofi \
  --without-psm2 --disable-mpi-fortran --disable-oshmem --disable-static \
  --enable-mpi1-compatibility >"$work/configure.log" 2>&1
make -j"$(nproc)" >"$work/make.log" 2>&1
make install >"$work/install.log" 2>&1
cd - >/dev/null
tar -C "$work/install" -cJf "$archive" .
echo "$archive: $(du -h "$archive" | cut -f1)"
