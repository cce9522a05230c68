"""What the bench/*-compare scripts share: the load rule for pairs, the
fsbench binary's path, and the --json rows bench/all merges.

Load rule (issue 15): the 1-minute load average is printed before each pair
and sampled every second while it runs; a pair during which it was above
1.5 x the number of CPUs at any sample is refused: its runs are left out of
the medians and reported (with the load) as refused. One place for the rule,
so the seven scripts cannot drift apart.

The --json file (one per script run) is
  {"script": NAME, "cpus": N, "load_limit": L, "argv": [...],
   "refused": [{"what": ..., "pair": i, "load": x}, ...],
   "rows": [ROW, ...]}
and each ROW has the keys of ROW_KEYS (None where a script does not measure
that figure): the figure in `unit` for the peer and fsbench and their ratio,
CPU per operation (`cpu_unit`) for both, max RSS in MB for both, the goal of
issue 15 as text and whether it was met (None: no goal, or no figure).
"""
import json
import os
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# FSBENCH names the binary; else CARGO_TARGET_DIR's release build; else the
# repository's own target/.
FSBENCH = os.environ.get("FSBENCH") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "fsbench")

def shared_peers_build():
    """The shared peers folder's build.sh, found as scripts/peers.sh finds
    it: ../shared/peers next to the repository, else next to the main
    checkout when this is a git worktree. The first candidate when neither
    exists (for the error message)."""
    cands = [os.path.join(ROOT, "..", "shared", "peers", "build.sh")]
    try:
        common = subprocess.run(["git", "-C", ROOT, "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        common = ""
    if common:
        cands.append(os.path.join(os.path.dirname(common), "..", "shared", "peers", "build.sh"))
    for c in cands:
        if os.access(c, os.X_OK):
            return os.path.normpath(c)
    return os.path.normpath(cands[0])


# Issue 15's rule is 1.5. FSBENCH_LOAD_FACTOR overrides it for smoke tests
# on a busy machine (bench/all --load-factor); every refusal line names the
# factor in force.
try:
    LOAD_FACTOR = float(os.environ.get("FSBENCH_LOAD_FACTOR") or 1.5)
except ValueError:
    sys.exit(f"FSBENCH_LOAD_FACTOR: expected a number, got '{os.environ['FSBENCH_LOAD_FACTOR']}'")

ROW_KEYS = ("row", "unit", "peer_name", "peer", "fsbench", "ratio", "cpu_unit", "cpu_peer", "cpu_fsbench",
            "rss_peer_mb", "rss_fsbench_mb", "goal", "met", "pairs", "note")


def load_text():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Pair:
    """One pair's load watch: prints the load before, samples it every second
    in a thread until close(), which prints the highest sample and says
    whether the pair is kept."""

    def __init__(self, guard, what, index):
        self.guard, self.what, self.index = guard, what, index
        self.before = os.getloadavg()[0]
        self.peak = self.before
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        print(f"  {what} pair {index}: load before {self.before:.2f} (refused above {guard.limit:.2f})",
              file=guard.out, flush=True)
        self.thread.start()

    def _sample(self):
        while not self.stop.wait(1.0):
            self.peak = max(self.peak, os.getloadavg()[0])

    def close(self):
        """True when the pair counts; False (and recorded) when refused."""
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, os.getloadavg()[0])
        ok = self.peak <= self.guard.limit
        verdict = "kept" if ok else (f"REFUSED: the 1-minute load reached {self.peak:.2f}, above "
                                     f"{LOAD_FACTOR} x {self.guard.cpus} CPUs = {self.guard.limit:.2f}; "
                                     "left out of the medians")
        print(f"  {self.what} pair {self.index}: load during max {self.peak:.2f}, now {load_text()}: {verdict}",
              file=self.guard.out, flush=True)
        if not ok:
            self.guard.refused.append({"what": self.what, "pair": self.index, "load": round(self.peak, 2),
                                       "limit": round(self.guard.limit, 2)})
        return ok


class LoadGuard:
    """The load rule for one script run; refused pairs accumulate here."""

    def __init__(self, out=sys.stdout):
        self.cpus = os.cpu_count() or 1
        self.limit = LOAD_FACTOR * self.cpus
        self.refused = []
        self.out = out

    def pair(self, what, index):
        return Pair(self, what, index)

    def refused_of(self, what):
        return [r for r in self.refused if r["what"] == what]

    def summary(self):
        """Lines for the end of a script's report (empty when none refused)."""
        if not self.refused:
            return []
        return [f"refused pairs (load above {self.limit:.2f} = {LOAD_FACTOR} x {self.cpus} CPUs), left out of the "
                "medians:"] + [f"  {r['what']} pair {r['pair']}: load {r['load']:.2f}" for r in self.refused]


def ratio(x, y):
    return x / y if x is not None and y else None


def row(**kw):
    unknown = set(kw) - set(ROW_KEYS)
    if unknown:
        raise KeyError(f"unknown row keys {sorted(unknown)}")
    return {k: kw.get(k) for k in ROW_KEYS}


def goal_within(r, cpu_r, tol=0.10, in_range=False):
    """The goal of IOzone, Bonnie++, Postmark and YCSB rows: within the
    tolerance of the peer or faster (or, as the scripts' verdicts say, in the
    peer's own run-to-run range), and CPU per op no higher. None when there
    is no figure."""
    if r is None:
        return None
    fast = r >= 1 - tol or in_range
    return fast and (cpu_r is None or cpu_r <= 1.0)


def write_json(path, script, rows, guard, extra=None):
    """The rows as JSON in PATH (written whole, then renamed into place)."""
    if not path:
        return
    doc = {"script": script, "cpus": guard.cpus, "load_factor": LOAD_FACTOR, "load_limit": guard.limit, "argv": sys.argv[1:],
           "refused": guard.refused, "rows": rows}
    doc.update(extra or {})
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def _self_test():
    """`python3 bench/_common.py`: the load rule and the JSON file, on real
    load samples with limits either side of them."""
    import io
    import tempfile
    guard = LoadGuard(out=io.StringIO())
    guard.limit = -1.0  # below any load: the pair must be refused
    assert not guard.pair("t", 1).close()
    assert guard.refused and guard.refused[0]["pair"] == 1 and guard.refused[0]["load"] >= 0
    guard.limit = float("inf")
    assert guard.pair("t", 2).close() and len(guard.refused) == 1
    assert "REFUSED" in guard.out.getvalue() and "kept" in guard.out.getvalue()
    assert goal_within(0.95, 1.0) and not goal_within(0.85, 0.9) and goal_within(0.85, 0.9, in_range=True)
    assert not goal_within(1.5, 1.01) and goal_within(None, None) is None
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rows.json")
        write_json(path, "self-test", [row(row="r", ratio=1.0, met=True)], guard)
        with open(path) as f:
            doc = json.load(f)
        assert doc["rows"][0]["row"] == "r" and set(doc["rows"][0]) == set(ROW_KEYS)
        assert doc["refused"] == guard.refused and os.listdir(d) == ["rows.json"]
    print("bench/_common.py: self-test passed")


if __name__ == "__main__":
    _self_test()
