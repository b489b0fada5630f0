#!/bin/sh
# Builds CVODE's side of `tandem-bench stiff`: target/cvode_harness (dense,
# the test set) and target/cvode_sparse_harness (KLU, the large sparse
# problems). It needs Debian's libsundials-dev (bench/install-tools.sh
# installs it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../target/cvode_harness}
if [ ! -f /usr/include/cvode/cvode.h ] || [ ! -f /usr/include/suitesparse/klu.h ]; then
    echo "CVODE's headers are missing: run bench/install-tools.sh (Debian's libsundials-dev)" >&2
    exit 1
fi
mkdir -p "$(dirname "$out")"
cc -O2 -o "$out" "$here/harness.c" -lsundials_cvode -lsundials_nvecserial -lsundials_sunlinsoldense \
    -lsundials_sunmatrixdense -lm
cc -O2 -o "$(dirname "$out")/cvode_sparse_harness" "$here/sparse.c" -I/usr/include/suitesparse -lsundials_cvode -lsundials_nvecserial \
    -lsundials_sunlinsolklu -lsundials_sunmatrixsparse -lklu -lm
echo "$out"
