#!/bin/sh
# Builds CVODE's side of `tandem bench stiff` into target/cvode_harness,
# installing Debian's libsundials-dev first when its headers are missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../target/cvode_harness}
if [ ! -f /usr/include/cvode/cvode.h ]; then
    echo "installing libsundials-dev (CVODE) ..." >&2
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libsundials-dev >&2
fi
mkdir -p "$(dirname "$out")"
cc -O2 -o "$out" "$here/harness.c" -lsundials_cvode -lsundials_nvecserial -lsundials_sunlinsoldense \
    -lsundials_sunmatrixdense -lm
echo "$out"
