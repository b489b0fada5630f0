#!/usr/bin/env bash
# Builds the QEMU test host: a Debian PREEMPT_RT kernel and an initramfs in
# which the kernel's CAN stack is loaded, vcan0 exists (CAN FD capable, MTU 72)
# and the given statically linked test binaries run one after the other.
#
# Usage: tests/qemu/build-host.sh [--dir DIR] [--run] [NAME=]BINARY...
#
#   --dir DIR  where the Debian packages are cached and the host is built
#              (default: ${CARGO_TARGET_DIR:-<repo>/target}/qemu-host).
#   --run      boot the host afterwards (QEMU, TCG, serial console on stdout).
#   BINARY     a statically linked program, run in the VM as /tests/NAME
#              (NAME defaults to its file name), in the order given.
#
# Results: DIR/vmlinuz and DIR/initramfs.cpio. Boot them with
#   qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot -nic none \
#     -kernel DIR/vmlinuz -initrd DIR/initramfs.cpio -append 'console=ttyS0 panic=-1 quiet'
#
# On the serial console /init prints, for each binary:
#   TANDEM-QEMU-BEGIN NAME
#   TANDEM-QEMU-EXIT NAME STATUS
# then TANDEM-QEMU-DONE and powers off; TANDEM-QEMU-SETUP-FAILED REASON if the
# CAN stack could not be set up. Binaries run as root with TANDEM_VCAN=vcan0.
#
# Idempotent: the packages are downloaded once into DIR/debs, the kernel and
# modules extracted once; only the initramfs is rebuilt on every call.
# Installs qemu-system-x86 and cpio with apt-get when missing.
#
# Exit status: 0 built (and, with --run, booted); 77 QEMU is not available and
# cannot be installed (callers skip); anything else is an error.

set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir="${CARGO_TARGET_DIR:-$root/target}/qemu-host"
run=0
binaries=()
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir="$2"; shift 2 ;;
        --run) run=1; shift ;;
        -h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) echo "build-host.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) binaries+=("$1"); shift ;;
    esac
done

# The CAN modules to load; their dependencies are found and loaded first.
modules=(can can-raw vcan)
# The kernel: Debian's PREEMPT_RT metapackage, resolved to its concrete image.
kernel_meta=linux-image-rt-amd64

say() { echo "build-host.sh: $*" >&2; }
die() { say "$*"; exit 1; }

mkdir -p "$dir"
log="$dir/apt.log"

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo "$@"
    else
        echo "not root, and no sudo without a password" >>"$log"
        return 1
    fi
}

apt_updated=0
apt_update() {
    [ "$apt_updated" = 1 ] && return 0
    apt_updated=1
    as_root apt-get update -qq >>"$log" 2>&1
}

# apt_install PACKAGE...: installs the packages, refreshing the lists if needed.
apt_install() {
    command -v apt-get >/dev/null || { echo "no apt-get" >>"$log"; return 1; }
    local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@")
    as_root "${install[@]}" >>"$log" 2>&1 && return 0
    apt_update && as_root "${install[@]}" >>"$log" 2>&1
}

if ! command -v qemu-system-x86_64 >/dev/null; then
    say "installing qemu-system-x86 (apt-get, log in $log)"
    if ! apt_install qemu-system-x86 || ! command -v qemu-system-x86_64 >/dev/null; then
        tail -n 5 "$log" >&2
        say "QEMU is not available and could not be installed (apt-get install qemu-system-x86 needs root and Debian's archive): the QEMU test host cannot run"
        exit 77
    fi
fi
if ! command -v cpio >/dev/null; then
    say "installing cpio (apt-get, log in $log)"
    apt_install cpio || { tail -n 5 "$log" >&2; die "cpio is missing and could not be installed: apt-get install cpio"; }
fi

debs="$dir/debs"
mkdir -p "$debs"

# first DIR FIND-ARGS...: the first file found, or nothing.
first() {
    local where=$1
    shift
    find "$where" "$@" -print -quit
}

# download PACKAGE: the package's .deb in $debs (downloaded once; a partial
# download never lands there).
download() {
    local found partial
    found=$(first "$debs" -maxdepth 1 -name "$1_*.deb")
    if [ -z "$found" ]; then
        say "downloading $1"
        partial=$(mktemp -d "$debs/partial.XXXXXX")
        local get=(apt-get download -qq "$1")
        [ "$(id -u)" = 0 ] && get=(apt-get download -qq -o APT::Sandbox::User=root "$1")
        (cd "$partial" && "${get[@]}" >>"$log" 2>&1) ||
            { apt_update && (cd "$partial" && "${get[@]}" >>"$log" 2>&1); } ||
            { rm -rf "$partial"; tail -n 5 "$log" >&2; die "cannot download $1 (apt-get download $1)"; }
        mv "$partial"/*.deb "$debs"/
        rm -rf "$partial"
        found=$(first "$debs" -maxdepth 1 -name "$1_*.deb")
    fi
    [ -n "$found" ] || die "no .deb for $1 in $debs"
    echo "$found"
}

# The concrete kernel package the metapackage depends on.
kernel_package() {
    { apt-cache depends "$kernel_meta" 2>/dev/null || true; } | sed -n 's/^ *Depends: \(linux-image-[^ ]*-rt-amd64\)$/\1/p' | sed -n 1p
}

kernel_deb=$(first "$debs" -maxdepth 1 -name 'linux-image-*-rt-amd64_*.deb' ! -name "${kernel_meta}_*")
if [ -z "$kernel_deb" ]; then
    pkg=$(kernel_package)
    if [ -z "$pkg" ]; then
        apt_update || true
        pkg=$(kernel_package)
    fi
    [ -n "$pkg" ] || die "cannot resolve $kernel_meta to a kernel package (apt-cache depends $kernel_meta)"
    kernel_deb=$(download "$pkg")
fi
busybox_deb=$(download busybox-static)

# The kernel and its CAN modules, extracted once.
kdir="$dir/kernel"
if [ ! -f "$kdir/.done" ]; then
    say "extracting $(basename "$kernel_deb")"
    rm -rf "$kdir"
    mkdir -p "$kdir"
    # A pattern that matches nothing (e.g. modules.builtin) is not an error;
    # what is needed is checked below.
    dpkg-deb --fsys-tarfile "$kernel_deb" |
        tar -x -C "$kdir" --wildcards '*/vmlinuz-*' '*/kernel/net/can/*' '*/kernel/drivers/net/can/*' \
            '*/modules.builtin' 2>/dev/null || true
fi
vmlinuz=$(first "$kdir" -name 'vmlinuz-*')
[ -n "$vmlinuz" ] || die "no kernel image in $kernel_deb"
moddir=$(first "$kdir" -type d -path '*/lib/modules/*' -prune)
[ -n "$moddir" ] || die "no modules in $kernel_deb"
touch "$kdir/.done"
cp "$vmlinuz" "$dir/vmlinuz"

bdir="$dir/busybox"
if [ ! -x "$bdir/bin/busybox" ]; then
    rm -rf "$bdir"
    dpkg-deb -x "$busybox_deb" "$bdir"
fi
busybox="$bdir/bin/busybox"
[ -x "$busybox" ] || die "no busybox in $busybox_deb"

# The initramfs tree.
tree="$dir/initramfs"
rm -rf "$tree"
mkdir -p "$tree/bin" "$tree/modules" "$tree/tests"
cp "$busybox" "$tree/bin/busybox"

# Modules in dependency order, decompressed.
loaded=" "
module_count=0
add_module() {
    local name=$1 file dep deps
    case "$loaded" in *" $name "*) return 0 ;; esac
    file=$(first "$moddir" \( -name "$name.ko*" -o -name "${name//-/_}.ko*" -o -name "${name//_/-}.ko*" \))
    if [ -z "$file" ]; then
        if grep -qE "/(${name//-/[-_]})\.ko$" "$moddir"/modules.builtin 2>/dev/null; then
            loaded="$loaded$name "
            return 0
        fi
        die "kernel module $name not found in $(basename "$kernel_deb")"
    fi
    local tmp="$dir/$name.ko.tmp"
    case "$file" in
        *.ko) cp "$file" "$tmp" ;;
        *.ko.xz) "$busybox" xz -dc "$file" >"$tmp" ;;
        *.ko.gz) "$busybox" gzip -dc "$file" >"$tmp" ;;
        *.ko.zst) command -v zstd >/dev/null || apt_install zstd || die "zstd needed for $file"
            zstd -qdc "$file" >"$tmp" ;;
        *) die "unknown module format: $file" ;;
    esac
    deps=$( (grep -a -o -m 1 'depends=[A-Za-z0-9_,-]*' "$tmp" || true) | sed -n '1s/^depends=//p' | tr ',' ' ')
    for dep in $deps; do add_module "$dep"; done
    module_count=$((module_count + 1))
    mv "$tmp" "$tree/modules/$(printf '%02d' "$module_count")-$name.ko"
    loaded="$loaded$name "
}
for m in "${modules[@]}"; do add_module "$m"; done

# The test binaries, in order.
: >"$tree/tests/order"
for b in "${binaries[@]}"; do
    case "$b" in
        *=*) name=${b%%=*}; path=${b#*=} ;;
        *) name=$(basename "$b"); path=$b ;;
    esac
    [ -f "$path" ] || die "no such binary: $path"
    cp "$path" "$tree/tests/$name"
    chmod +x "$tree/tests/$name"
    echo "$name" >>"$tree/tests/order"
done

cat >"$tree/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin HOME=/tmp TANDEM_VCAN=vcan0 RUST_BACKTRACE=1
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
finish() { sync; poweroff -f; sleep 10; }
setup_failed() { echo "TANDEM-QEMU-SETUP-FAILED $*"; finish; }
echo "tandem-qemu: kernel $(uname -r) $(uname -v), realtime=$(cat /sys/kernel/realtime 2>/dev/null || echo absent)"
for m in /modules/*.ko; do
    [ -e "$m" ] || continue
    insmod "$m" || setup_failed "insmod $m"
done
ip link add vcan0 type vcan || setup_failed "ip link add vcan0 type vcan"
ip link set vcan0 mtu 72 || setup_failed "ip link set vcan0 mtu 72 (CAN FD)"
ip link set up vcan0 || setup_failed "ip link set up vcan0"
echo "tandem-qemu: $(ip link show vcan0 | head -n 1)"
for t in $(cat /tests/order); do
    echo "TANDEM-QEMU-BEGIN $t"
    (cd /tmp && "/tests/$t")
    echo "TANDEM-QEMU-EXIT $t $?"
done
echo "TANDEM-QEMU-DONE"
finish
EOF
chmod +x "$tree/init"

(cd "$tree" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$dir/initramfs.cpio"
say "built $dir/vmlinuz ($(basename "$kernel_deb")) and $dir/initramfs.cpio ($(du -h "$dir/initramfs.cpio" | cut -f1), modules:$(printf ' %s' "$tree"/modules/*.ko | sed "s|$tree/modules/||g"))"

if [ "$run" = 1 ]; then
    exec timeout 300 qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot -nic none \
        -kernel "$dir/vmlinuz" -initrd "$dir/initramfs.cpio" -append 'console=ttyS0 panic=-1 quiet'
fi
