# SPDX-License-Identifier: GPL-2.0-or-later
"""Section 11 of the results page over its replicates: tune's prediction
run live more than once per workload (W/replicates.csv, written by
workloads/real/predict_reps.py W; W is 'predict' for NumPy,
'predict-redis' for Redis). Helpers for render_results.py's
placeholders, built on its readers (names() takes that module):

  pr(W, COLUMN)                every replicate's COLUMN, in replicate order
  pr_n(W)                      how many replicates
  pr_rng(W, A, B, FORMAT)      'LOW-HIGH': the lowest and highest value of
                               columns A and B over the replicates (those
                               with a value: run 1 has no load noted)
  pr_within(W, TOL)            'k of n': replicates whose live/model ksmd CPU
                               stayed within 1 +- TOL at every mark
  pr_outside(W, TOL)           the replicates (numbers) that did not
  pr_settings(W)               the distinct settings tune recommended
  pr_setting_text(W)           the same, in words ('the same setting in all
                               3 runs, ...' or each run's)
  table_pred_reps(W)           the page's table of W's replicates
"""

R = None        # render_results, set by names()


def _path(w):
    if w not in ("predict", "predict-redis"):
        raise R.RenderError(f"no replicates for '{w}' (predict or predict-redis)")
    return f"{w}/replicates.csv"


def _reps(w):
    rows = R._match(_path(w), {})
    if not rows:
        raise R.RenderError(f"{_path(w)}: no replicates")
    got = [int(r["rep"]) for r in rows]
    if got != list(range(1, len(rows) + 1)):
        raise R.RenderError(f"{_path(w)}: replicates {got}, not 1..{len(rows)}")
    return rows


def pr(w, col):
    rows = _reps(w)
    if col not in rows[0]:
        raise R.RenderError(f"{_path(w)}: no column '{col}'")
    return [R._val(r[col]) for r in rows]


def pr_n(w):
    return len(_reps(w))


def pr_rng(w, lo, hi, spec):
    """Over the replicates that hold a value (run 1 has no load noted)."""
    los = [x for x in pr(w, lo) if x != ""]
    his = [x for x in pr(w, hi) if x != ""]
    if not los or not his:
        raise R.RenderError(f"{_path(w)}: no values of {lo}, {hi}")
    return R.rng([min(los + his), max(los + his)], spec)


def _outside(w, tol):
    return [r for r, a, b in zip(pr(w, "rep"), pr(w, "cpu_ratio_min"), pr(w, "cpu_ratio_max"))
            if a < 1 - tol or b > 1 + tol]


def pr_within(w, tol):
    return f"{pr_n(w) - len(_outside(w, tol))} of {pr_n(w)}"


def pr_outside(w, tol):
    out = _outside(w, tol)
    return ", ".join(str(x) for x in out) if out else "none"


def pr_settings(w):
    seen = []
    for s in pr(w, "setting"):
        if s not in seen:
            seen.append(s)
    return seen


def pr_setting_text(w):
    """Tune's picks over the replicates, in words: one setting, or each run's."""
    got = pr_settings(w)
    if len(got) == 1:
        runs = "both runs" if pr_n(w) == 2 else f"all {pr_n(w)} runs"
        return f"the same setting in {runs}, `{got[0]}`"
    return "different settings: " + "; ".join(
        f"run {r} `{s}`" for r, s in zip(pr(w, "rep"), pr(w, "setting")))


def _load(r):
    if r["load1_live_start"] == "" and r["load1_live_end"] == "":
        return "not noted"
    return f"{r['load1_live_start']} → {r['load1_live_end']}"


def table_pred_reps(w):
    """One row a replicate: its date, kernel, tune's setting, live/model
    pages_sharing and ksmd CPU over the marks and at the end, full scans,
    the 1-minute load at the live run's start and end, other processes'
    mergeable memory seen during the live run."""
    out = ["| run | date (UTC) | kernel | tune's setting | marks | live/model pages_sharing "
           "| live/model ksmd CPU | at the end | full scans live / model | load, live start → end "
           "| other mergeable memory |",
           "|---:|---|---|---|---|---:|---:|---:|---:|---|---|"]
    for r in _reps(w):
        src = "record's" if r["source"] == "minutes.csv" else "a minute"
        out.append("| " + " | ".join((
            r["rep"], r["date"].replace(" UTC", ""), r["kernel"], f"`{r['setting']}`",
            f"{r['marks']}, {src}",
            R.rng([R._val(r["sharing_ratio_min"]), R._val(r["sharing_ratio_max"])], ".3f"),
            R.rng([R._val(r["cpu_ratio_min"]), R._val(r["cpu_ratio_max"])], ".2f"),
            R.f(R._val(r["cpu_ratio_end"]), ".2f"),
            f"{r['live_full_scans_end']} / {r['model_full_scans_end']}", _load(r),
            r["foreign"] or "not sampled")) + " |")
    return "\n".join(out)


def names(module):
    """The helpers by the names the template calls them, on MODULE's readers."""
    global R
    R = module
    return {"pr": pr, "pr_n": pr_n, "pr_rng": pr_rng, "pr_within": pr_within,
            "pr_outside": pr_outside, "pr_settings": pr_settings,
            "pr_setting_text": pr_setting_text,
            "table_pred_reps": table_pred_reps}
