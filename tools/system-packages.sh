#!/usr/bin/env bash
# Installs the optional system packages the OpenMP and MPI work needs: clang and LLVM's OpenMP
# runtime (libomp-dev), with which `pp run` and the OpenMP examples and tests run, and Open MPI
# (openmpi-bin: mpirun; libopenmpi-dev: mpicc and the headers), with which the MPI examples
# (examples/mpi) and their tests run, and the OTF2 library (libopen-trace-format2-dev: the
# library `pp import` loads at run time and the headers its tests write traces with;
# otf2-tools: otf2-print, which checks those traces). Idempotent: it checks
# first and does nothing when they are present. As root with apt-get it installs what is
# missing; otherwise it prints what it would have run and exits 0 (the tests that need the
# packages then say they were skipped and why). `.ci/run` calls it before the tests.
#
# Debian bookworm: clang and libomp-dev are LLVM 14. Do not add libomp-19-dev: it removes
# libomp-14's files.
#
# MPI: Open MPI only (Debian's default MPI). MPICH (mpich, libmpich-dev) can be installed
# beside it; which one `mpicc` and `mpirun` mean is then update-alternatives' choice (mpi,
# mpirun), and Open MPI's own stay reachable as mpicc.openmpi and mpirun.openmpi.
set -uo pipefail

missing=()

if command -v clang >/dev/null 2>&1; then
    echo "system-packages: clang: present ($(command -v clang))"
else
    missing+=(clang)
fi

# libomp: a libomp.so of some LLVM, or clang compiling and linking an OpenMP program.
have_libomp() {
    compgen -G '/usr/lib/llvm-*/lib/libomp.so' >/dev/null && return 0
    command -v clang >/dev/null 2>&1 || return 1
    local dir
    dir=$(mktemp -d) || return 1
    printf '#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n' >"$dir/t.c"
    clang -fopenmp "$dir/t.c" -o "$dir/t" >/dev/null 2>&1
    local ok=$?
    rm -rf "$dir"
    return $ok
}
if have_libomp; then
    echo "system-packages: libomp-dev: present"
else
    missing+=(libomp-dev)
fi

# Open MPI: mpicc comes with libopenmpi-dev, mpirun with openmpi-bin. Any MPI's commands count
# as present (an MPICH installed by hand is not replaced).
if command -v mpicc >/dev/null 2>&1; then
    echo "system-packages: mpicc: present ($(command -v mpicc))"
else
    missing+=(libopenmpi-dev)
fi
if command -v mpirun >/dev/null 2>&1; then
    echo "system-packages: mpirun: present ($(command -v mpirun))"
else
    missing+=(openmpi-bin)
fi

# OTF2: the library and headers `pp import` and its tests need, and otf2-print.
if [ -e /usr/include/otf2/otf2.h ] && compgen -G '/usr/lib/*/libopen-trace-format2.so*' >/dev/null; then
    echo "system-packages: libopen-trace-format2-dev: present"
else
    missing+=(libopen-trace-format2-dev)
fi
if command -v otf2-print >/dev/null 2>&1; then
    echo "system-packages: otf2-print: present ($(command -v otf2-print))"
else
    missing+=(otf2-tools)
fi

# gfortran: Open MPI's mpifort runs it; with it the Fortran MPI example (examples/mpi/*.f90)
# and its test run (pp's tracer records Fortran's `mpif.h` and `use mpi` calls).
if command -v gfortran >/dev/null 2>&1; then
    echo "system-packages: gfortran: present ($(command -v gfortran))"
else
    missing+=(gfortran)
fi

if [ ${#missing[@]} -eq 0 ]; then
    echo "system-packages: nothing to install"
    exit 0
fi

install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}")
if [ "${EUID:-$(id -u)}" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    why="not root"
    command -v apt-get >/dev/null 2>&1 || why="no apt-get"
    for m in "${missing[@]}"; do
        echo "system-packages: $m: missing; would run (as root): ${install[*]:1} ($why; the tests that need it are skipped)"
    done
    exit 0
fi

echo "system-packages: installing ${missing[*]}"
if ! "${install[@]}"; then
    echo "system-packages: install failed; running apt-get update and trying again"
    apt-get update && "${install[@]}" || {
        echo "system-packages: could not install ${missing[*]}; the tests that need them are skipped"
        exit 0
    }
fi
echo "system-packages: installed ${missing[*]}"
