#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the guest image of workloads/vm from Debian packages only:
#
#   build-image.sh [minimal|full]...      (default: minimal)
#
# minimal: Debian's guest kernel (linux-image-amd64's vmlinuz) and an
#   initramfs of busybox-static, the virtio-blk/ext4 modules and our init
#   (guest-init.sh): boots in seconds under TCG, runs a busybox workload.
# full: the minimal tier plus an ext4 image (mkfs.ext4 -d, no loop mount) of
#   'debootstrap --variant=minbase bookworm' with gcc, make, fio,
#   python3-numpy, the zlib source tree (a C build workload) and
#   numpy_vm.py; the initramfs mounts it (root=/dev/vda) and runs the
#   workload chrooted in it.
#
# Everything lands in the cache ($KSMSIM_VM_CACHE, default
# workloads/vm/cache/, gitignored): a second run reuses it and downloads
# nothing. REBUILD=1 rebuilds the tier's outputs (downloads stay cached).
# MIRROR (default http://deb.debian.org/debian), SUITE (default bookworm).
# Prints one line per tier: tier, kernel, files, size, seconds.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${KSMSIM_VM_CACHE:-$here/cache}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=${SUITE:-bookworm}
FULL_MB=${FULL_MB:-2048}

die() { echo "build-image.sh: $*" >&2; exit 2; }

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(minimal)
for t in "${tiers[@]}"; do
	case $t in minimal|full) ;; *) die "unknown tier '$t' (minimal or full)";; esac
done
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, device nodes in the image)"
for c in apt-get apt-cache dpkg-deb cpio gzip; do
	command -v "$c" >/dev/null || die "'$c' missing (apt-get install -y cpio)"
done

mkdir -p "$CACHE/debs"
tmp=$(mktemp -d "$CACHE/build.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# apt-get download PKG into the cache once; prints the .deb's path
fetch() {
	local pkg=$1 f
	f=$(find "$CACHE/debs" -maxdepth 1 -name "${pkg}_*.deb" | sort | tail -n 1)
	if [ -z "$f" ]; then
		(cd "$tmp" && apt-get download -q "$pkg" >&2) ||
			die "apt-get download $pkg failed (no network to the Debian mirror? try apt-get update)"
		mv "$tmp/${pkg}"_*.deb "$CACHE/debs/"
		f=$(find "$CACHE/debs" -maxdepth 1 -name "${pkg}_*.deb" | sort | tail -n 1)
	fi
	echo "$f"
}

# The kernel: linux-image-amd64 depends on linux-image-VERSION-amd64. The
# cache keeps its .deb, vmlinuz and config; the modules are unpacked into
# the temporary folder only when the initramfs is (re)built.
kernel() {
	local kdeb
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	[ -n "$kpkg" ] || die "apt-cache knows no linux-image-amd64 (apt-get update first)"
	kver=${kpkg#linux-image-}
	kdir=$CACHE/kernel-$kver
	if [ ! -e "$kdir/vmlinuz" ]; then
		kdeb=$(fetch "$kpkg")
		kernel_tree "$kdeb"
		rm -rf "$kdir.tmp" && mkdir -p "$kdir.tmp"
		cp "$tmp/k/boot/vmlinuz-$kver" "$kdir.tmp/vmlinuz"
		cp "$tmp/k/boot/config-$kver" "$kdir.tmp/config"
		rm -rf "$kdir" && mv "$kdir.tmp" "$kdir"
	fi
}

# The kernel package unpacked in $tmp/k (once a run); kmods: its modules.
kernel_tree() {
	if [ ! -d "$tmp/k" ]; then
		mkdir -p "$tmp/k.part"
		dpkg-deb -x "${1:-$(fetch "$kpkg")}" "$tmp/k.part"
		mv "$tmp/k.part" "$tmp/k"
	fi
	kmods=$tmp/k/lib/modules/$kver
}

# Modules (and what they depend on) in load order, as paths under modules/.
modlist() {
	local m f dep
	for m in "$@"; do
		f=$(find "$kmods" -name "$m.ko" -o -name "$m.ko.xz" | head -n 1)
		[ -n "$f" ] || continue # built in
		# the .modinfo section's depends= (no kmod needed)
		for dep in $(tr '\0' '\n' < "$f" | sed -n 's/^depends=//p' | tr , ' '); do modlist "$dep"; done
		grep -qxF "${f#"$kmods"/}" "$tmp/mods" 2>/dev/null || echo "${f#"$kmods"/}" >> "$tmp/mods"
	done
}

initramfs() {
	local out=$CACHE/minimal/initrd.img bb r m
	# rebuilt when the kernel (its modules) or the init changed
	if [ -e "$out" ] && [ -z "${REBUILD:-}" ] && [ "$out" -nt "$here/guest-init.sh" ] &&
		[ "$(cat "$CACHE/minimal/kernel-version" 2>/dev/null)" = "$kver" ]; then
		return
	fi
	bb=$(fetch busybox-static)
	kernel_tree
	r=$tmp/initramfs
	rm -rf "$r" && mkdir -p "$r"/{bin,dev,proc,sys,tmp,newroot,lib/modules}
	mkdir -p "$tmp/bb" && dpkg-deb -x "$bb" "$tmp/bb"
	cp "$tmp/bb/bin/busybox" "$r/bin/busybox"
	ln -s busybox "$r/bin/sh"
	: > "$tmp/mods"
	modlist virtio_pci virtio_blk ext4 crc32c_generic
	while read -r m; do
		case $m in
		*.xz) xz -dc "$kmods/$m" > "$r/lib/modules/$(basename "${m%.xz}")";;
		*) cp "$kmods/$m" "$r/lib/modules/";;
		esac
		basename "${m%.xz}" >> "$r/lib/modules/order"
	done < "$tmp/mods"
	touch "$r/lib/modules/order"
	cp "$here/guest-init.sh" "$r/init"
	chmod 755 "$r/init"
	echo "$kver" > "$r/kernel-version"
	mkdir -p "$CACHE/minimal"
	(cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -9n) > "$out.tmp"
	echo "$kver" > "$CACHE/minimal/kernel-version.tmp"
	mv "$out.tmp" "$out"
	mv "$CACHE/minimal/kernel-version.tmp" "$CACHE/minimal/kernel-version"
	rm -rf "$r" "$tmp/bb"
}

# The zlib source tree from Debian's source package (a private apt state,
# the system's lists and sources are not touched).
zlib_source() {
	local a=$CACHE/apt-src dest=$1
	if ! ls "$CACHE"/src/zlib_*.orig.tar.* >/dev/null 2>&1; then
		mkdir -p "$a/lists/partial" "$CACHE/src"
		echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $SUITE main" > "$a/sources.list"
		local o=(-o "Dir::Etc::SourceList=$a/sources.list" -o "Dir::Etc::SourceParts=$a/none"
			-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache")
		apt-get "${o[@]}" -q update >&2 || die "apt-get update of deb-src failed"
		(cd "$tmp" && apt-get "${o[@]}" -q source --download-only zlib >&2) || die "apt-get source zlib failed"
		mv "$tmp"/zlib_*.orig.tar.* "$CACHE/src/"
	fi
	mkdir -p "$dest"
	tar -xf "$(find "$CACHE/src" -maxdepth 1 -name 'zlib_*.orig.tar.*' | sort | tail -n 1)" -C "$dest" --strip-components=1
}

full() {
	local out=$CACHE/full/root.img root=$CACHE/full/root
	if [ -e "$out" ] && [ -z "${REBUILD:-}" ] && [ "$out" -nt "$here/guest-init.sh" ] &&
		[ "$out" -nt "$here/numpy_vm.py" ]; then
		return
	fi
	command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install -y debootstrap)"
	command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 missing (apt-get install -y e2fsprogs)"
	mkdir -p "$CACHE/full"
	if [ ! -e "$root/.ksmsim-done" ]; then
		rm -rf "$root"
		debootstrap --variant=minbase --cache-dir="$CACHE/debs" \
			--include=gcc,make,libc6-dev,fio,python3-numpy \
			"$SUITE" "$root" "$MIRROR" >&2 || die "debootstrap failed (network to $MIRROR?)"
		rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*_Packages
		touch "$root/.ksmsim-done"
	fi
	mkdir -p "$root/opt/ksmsim"
	rm -rf "$root/opt/ksmsim/zlib"
	zlib_source "$root/opt/ksmsim/zlib"
	cp "$here/numpy_vm.py" "$root/opt/ksmsim/numpy_vm.py"
	cp "$here/guest-init.sh" "$root/sbin/ksmsim-init"
	chmod 755 "$root/sbin/ksmsim-init"
	rm -f "$out.tmp"
	mkfs.ext4 -q -F -L ksmsim -E root_owner=0:0 -d "$root" "$out.tmp" "${FULL_MB}M" ||
		die "mkfs.ext4 -d failed"
	mv "$out.tmp" "$out"
}

kernel
for t in "${tiers[@]}"; do
	start=$(date +%s)
	initramfs
	files="$CACHE/kernel-$kver/vmlinuz $CACHE/minimal/initrd.img"
	[ "$t" = full ] && full && files="$files $CACHE/full/root.img"
	# shellcheck disable=SC2086
	size=$(du -cb --apparent-size $files | tail -n 1 | cut -f 1)
	echo "image: tier=$t kernel=$kver files=$files size=$((size / 1048576))MiB build_s=$(($(date +%s) - start))"
done
