"""What the bench/*-compare scripts share: the load rule for pairs, the
fsbench binary's path, and the --json rows bench/all merges.

Load rule (issue 15): the 1-minute load average is printed before each pair
and sampled every second while it runs; a pair during which the others'
part of it (the runnable threads other than those of the tools this
script runs, averaged as the kernel averages the load: LoadGuard says why
and how) was above 1.5 x the number of CPUs at any
sample is refused: its runs are left out of the medians and reported (with
the load) as refused. One place for the rule, so the seven scripts cannot
drift apart.

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
import signal
import subprocess
import sys
import threading
import time

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


def provenance():
    """What a bench JSON file says about where its figures come from: the
    UTC time, the fsbench binary, its version and the repository's commit,
    the CPUs and the load average (1, 5, 15 min) at this moment. bench/all and
    bench/seeds record it at the start and, as `finished`, at the end;
    bench/report prints it above every table."""
    import datetime
    try:
        version = subprocess.run([FSBENCH, "--version"], capture_output=True, text=True).stdout.split()[-1]
    except (OSError, IndexError):
        version = None
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    return {"utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "fsbench": FSBENCH, "fsbench_version": version, "commit": commit, "cpus": os.cpu_count(),
            "load": [round(x, 2) for x in os.getloadavg()]}


def fmt(v, prec=1):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{prec}f}"


TABLE_COLS = ["row", "unit", "peer", "peer value", "fsbench", "ratio", "CPU/op peer", "CPU/op fsb", "CPU unit",
              "RSS MB peer", "RSS MB fsb", "goal", "met?", "pairs", "note"]
# The numeric columns (right-aligned).
TABLE_RIGHT = {3, 4, 5, 6, 7, 9, 10, 13}


def table_cells(rows):
    """bench/all's merged rows as text cells, one list per row, in the
    columns of TABLE_COLS: bench/all prints them aligned, bench/report as
    Markdown, so the two cannot differ."""
    lines = []
    for r in rows:
        lines.append([r["row"], r["unit"] or "-", r["peer_name"] or "-", fmt(r["peer"]), fmt(r["fsbench"]),
                      fmt(r["ratio"], 2), fmt(r["cpu_peer"], 2), fmt(r["cpu_fsbench"], 2), r["cpu_unit"] or "-",
                      fmt(r["rss_peer_mb"]), fmt(r["rss_fsbench_mb"]), r["goal"] or "-",
                      "-" if r["met"] is None else fmt(r["met"]), str(r["pairs"] if r["pairs"] is not None else "-"),
                      r["note"] or ""])
    return TABLE_COLS, lines


def active_threads(me=None):
    """(ours, others): how many threads the kernel's load average would count
    now (state R, runnable, or D, uninterruptible), split into those of this
    process's descendants (the tools it runs) and everyone else's."""
    me = me or os.getpid()
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
                parent[int(d)] = int(st[st.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    # This process and those above it (bench/all running this script) only
    # orchestrate: their sampling threads are counted on neither side.
    skip, p = set(), me
    while p not in skip and p > 0:
        skip.add(p)
        p = parent.get(p, 0)
    ours = others = 0
    for pid in parent:
        if pid in skip:
            continue
        p, hops = parent[pid], 0
        while p not in (0, 1, me) and hops < 64:
            p, hops = parent.get(p, 0), hops + 1
        n = 0
        try:
            for t in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{t}/stat") as f:
                    st = f.read()
                n += st[st.rindex(")") + 2] in "RD"
        except (OSError, ValueError, IndexError):
            pass  # gone meanwhile: count what was seen
        if p == me:
            ours += n
        else:
            others += n
    return ours, others


class Pair:
    """One pair's load watch: prints the load before, follows it (the
    guard samples every second) until close(), which prints the highest
    sample and says whether the pair is kept."""

    def __init__(self, guard, what, index):
        self.guard, self.what, self.index = guard, what, index
        with guard.lock:
            guard.peaks = []
        load, own, others = guard.sample_now()
        self.before = (load, own, others)
        print(f"  {what} pair {index}: load before {load:.2f} (ours ~{own:.2f}, others ~{others:.2f}; "
              f"refused when others > {guard.limit:.2f})", file=guard.out, flush=True)

    def close(self):
        """True when the pair counts; False (and recorded) when refused."""
        samples = [self.before] + self.guard.peaks + [self.guard.sample_now()]
        load, own, others = max(samples, key=lambda x: x[2])
        top = max(x[0] for x in samples)
        ok = others <= self.guard.limit
        verdict = "kept" if ok else (f"REFUSED: the others' 1-minute load reached {others:.2f} (load {load:.2f}, "
                                     f"ours ~{own:.2f}), above {LOAD_FACTOR} x {self.guard.cpus} CPUs = "
                                     f"{self.guard.limit:.2f}; left out of the medians")
        print(f"  {self.what} pair {self.index}: load during max {top:.2f}, others' max ~{others:.2f}, "
              f"now {load_text()}: {verdict}", file=self.guard.out, flush=True)
        if not ok:
            self.guard.refused.append({"what": self.what, "pair": self.index, "load": round(load, 2),
                                       "ours": round(own, 2), "others": round(others, 2),
                                       "limit": round(self.guard.limit, 2)})
        return ok


class LoadGuard:
    """The load rule for one script run; refused pairs accumulate here.

    The 1-minute load average counts the benchmark's own threads too
    (Filebench's fileserver runs 50, webserver 100): with them the rule
    would refuse every such pair on a small machine whatever else runs. So
    a thread samples, every second, every thread's state, counts those the
    load counts (R or D) on our side (our children's) and on the others',
    and keeps each count's 1-minute average the way the kernel keeps the
    load (exponential, 60 s); the rule applies to the others' average. Both
    are printed with the kernel's load.

    The others' figure is counted, not taken as the load minus ours: the
    kernel updates its average every 5 s and this thread every second, and
    while 100 threads start or stop the two averages move by several
    units between the kernel's updates, which the subtraction read as other
    tenants' load (webserver pairs with nothing else running were refused
    at "others ~3-5" that way)."""

    DECAY = 2.718281828 ** (-1 / 60)

    def __init__(self, out=sys.stdout):
        self.cpus = os.cpu_count() or 1
        self.limit = LOAD_FACTOR * self.cpus
        self.refused = []
        self.out = out
        # bench/all hands over its own averages (the load its earlier
        # scripts left, still decaying, is not others'); a script alone
        # starts from the load minus ours.
        try:
            self.own = float(os.environ.get("FSBENCH_LOAD_OURS") or 0.0)
        except ValueError:
            self.own = 0.0
        try:
            self.others = float(os.environ["FSBENCH_LOAD_OTHERS"])
        except (KeyError, ValueError):
            self.others = max(os.getloadavg()[0] - self.own, 0.0)
        self.peaks = []
        self.lock = threading.Lock()
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self):
        while True:
            ours, others = active_threads()
            with self.lock:
                self.own = self.own * self.DECAY + ours * (1 - self.DECAY)
                self.others = self.others * self.DECAY + others * (1 - self.DECAY)
                self.peaks.append((os.getloadavg()[0], self.own, self.others))
                del self.peaks[:-7200]
            time.sleep(1.0)

    def sample_now(self):
        """(1-minute load, our share of it, the others' share), the shares
        as this guard's 1-minute averages."""
        with self.lock:
            return os.getloadavg()[0], self.own, self.others

    def pair(self, what, index):
        return Pair(self, what, index)

    def summary(self):
        """Lines for the end of a script's report (empty when none refused)."""
        if not self.refused:
            return []
        return [f"refused pairs (others' load above {self.limit:.2f} = {LOAD_FACTOR} x {self.cpus} CPUs), left out "
                "of the medians:"] + [f"  {r['what']} pair {r['pair']}: load {r['load']:.2f}, ours ~{r['ours']:.2f}, "
                                      f"others ~{r['others']:.2f}" for r in self.refused]


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
    assert guard.refused and guard.refused[0]["pair"] == 1 and guard.refused[0]["others"] >= 0
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
    # Our own runnable children count as ours, a stranger's as others':
    # two busy loops are seen as ours, then one whose parent (a shell that
    # exits) leaves it to init, as someone else's.
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.5)
        seen, before = active_threads()
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert seen >= 1, f"active_threads saw {seen} of 2 busy children as ours"
    orphan = int(subprocess.run(["sh", "-c", f"{sys.executable} -c 'while True: pass' >/dev/null 2>&1 & echo $!"],
                                capture_output=True, text=True, check=True).stdout)
    try:
        time.sleep(0.5)
        ours, others = active_threads()
    finally:
        os.kill(orphan, signal.SIGKILL)
    assert ours == 0, f"active_threads counted {ours} of ours with no child running"
    assert others >= 1, f"active_threads saw {others} others' threads with a stranger's busy loop running"
    print(f"bench/_common.py: self-test passed (ours: {seen} of 2 busy children; others: {others} with a stranger's "
          f"busy loop, {before} while only ours ran)")


if __name__ == "__main__":
    _self_test()
