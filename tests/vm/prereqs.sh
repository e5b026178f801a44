# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the VM tests: what every guest they boot needs, each missing
# piece a skip (77) naming how to get it. vm_prereqs WHY: WHY says what
# root is needed for. vm_inputs TMP: the cached image, or the Debian mirror
# reachable to build it (the kernel and busybox come from its packages).
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

vm_prereqs() {
	[ "$(id -u)" = 0 ] || skip "not root ($1)"
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (apt-get install -y qemu-system-x86)"
	command -v cpio >/dev/null || skip "no cpio (apt-get install -y cpio)"
	command -v apt-get >/dev/null || skip "no apt-get (the image comes from Debian packages)"
}

vm_inputs() {
	mkdir -p "$KSMSIM_VM_CACHE"
	[ ! -e "$KSMSIM_VM_CACHE/minimal/initrd.img" ] || return 0
	apt-cache depends linux-image-amd64 2>/dev/null | grep -q 'Depends: linux-image-' ||
		skip "apt knows no linux-image-amd64 (no Debian package lists)"
	(cd "$1" && timeout 60 apt-get download -q busybox-static >/dev/null 2>&1) ||
		skip "cannot download from the Debian mirror (apt-get download busybox-static)"
	rm -f "$1"/*.deb
}
