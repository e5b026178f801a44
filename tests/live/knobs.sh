# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the live tests: every knob a replay may change, saved first
# and put back on every exit path (run 2 first, so that a changed
# max_page_sharing or merge_across_nodes is accepted, then the saved run).
# knob_snap prints KNOB=VALUE lines (KSM's, then khugepaged's);
# knob_restore FILE writes a snapshot back.
ksm=/sys/kernel/mm/ksm
khp=/sys/kernel/mm/transparent_hugepage/khugepaged
knobs="run pages_to_scan sleep_millisecs use_zero_pages max_page_sharing merge_across_nodes
  smart_scan stable_node_chains_prune_millisecs advisor_mode advisor_max_cpu
  advisor_min_pages_to_scan advisor_max_pages_to_scan advisor_target_scan_time"

knob_snap() {
  for k in $knobs; do [ -e $ksm/$k ] && echo "$k=$(cat $ksm/$k)"; done
  for k in pages_to_scan alloc_sleep_millisecs scan_sleep_millisecs; do
    [ -e $khp/$k ] && echo "khugepaged/$k=$(cat $khp/$k)"; done
  return 0
}

knob_restore() {
  [ -s "$1" ] || return 0
  echo 2 >$ksm/run; echo none >$ksm/advisor_mode 2>/dev/null
  while IFS== read -r k v; do
    case $k in
    run|advisor_mode) ;;
    khugepaged/*) echo "$v" >$khp/${k#khugepaged/} 2>/dev/null ;;
    *) echo "$v" >$ksm/$k 2>/dev/null ;;
    esac
  done <"$1"
  sed -n 's/^advisor_mode=.*\[\(.*\)\].*/\1/p' "$1" >$ksm/advisor_mode 2>/dev/null
  sed -n 's/^run=//p' "$1" >$ksm/run
}
