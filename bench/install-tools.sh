#!/bin/sh
# Installs what the benchmarks compare against, from Debian's packages:
#   rt-tests        cyclictest, for `tandem-bench jitter` and `tandem-bench rate`;
#   libsundials-dev SUNDIALS CVODE, for `tandem-bench stiff`;
#   libsuitesparse-dev KLU's headers, for its large sparse problems.
# The benchmarks themselves install nothing; they say when one is missing.
set -eu
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "installing rt-tests (cyclictest) and libsundials-dev (CVODE) and libsuitesparse-dev (KLU) from Debian ..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq rt-tests libsundials-dev libsuitesparse-dev
