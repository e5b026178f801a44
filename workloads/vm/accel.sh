# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the scripts that boot guests (record-guests.sh, replay-6.1.sh):
# pick_accel sets accel (kvm or tcg) and why. KVM only when /dev/kvm opens
# and the CPU has hardware virtualisation: on a VM without nested VMX,
# /dev/kvm can exist and still be unusable. ACCEL=... overrides.
pick_accel() {
	why=
	if [ -n "${ACCEL:-}" ]; then
		accel=$ACCEL why="ACCEL=$ACCEL"
	elif [ ! -e /dev/kvm ]; then
		accel=tcg why="no /dev/kvm"
	elif ! grep -qwE 'vmx|svm' /proc/cpuinfo; then
		accel=tcg why="/dev/kvm exists but the CPU has no vmx/svm flag"
	elif ! { exec 9<>/dev/kvm; } 2>/dev/null; then
		accel=tcg why="/dev/kvm does not open"
	else
		exec 9>&-
		accel=kvm why="/dev/kvm and vmx/svm"
	fi
}
