"""The order make interop hands test files to its two workers: longest
first (a greedy longest-processing-time schedule), from each file's time in
the last full run, kept in durations.json beside this file.

pytest-xdist's `--dist loadfile` keeps a file on one worker (its module
fixtures are set up once) but hands files out by their number of tests, so a
file of a few long tests (a Spark session, 1,100 snapshots frozen twice)
started last and ran alone while the other core sat idle. Here the longest
files start first and the short ones fill in at the end. A file not in
durations.json counts 10 s a test. Only the order changes: which tests run,
and each file on one worker, stay as they were.

The files in SPLIT go out test by test instead: their tests share no
module or session state but what is built once for every worker
(conftest.histories), so the tests of a long file spread over both
workers and fill in at the end, and the workers finish together. A split
test weighs its file's time over its number of tests.

Refresh the times after a full run: python scripts/test-times.py --write.
"""
import json
import pathlib

from xdist.scheduler import LoadFileScheduling

DURATIONS = pathlib.Path(__file__).with_name("durations.json")
# long files whose tests use function fixtures only (and conftest's session
# ones): handed out test by test
SPLIT = {"test_snippets.py", "test_hindex.py", "test_clone.py", "test_rebase.py", "test_freeze.py", "test_web.py",
         "test_mistakes.py"}


def load_durations():
    try:
        return json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}


class LongestFileFirst(LoadFileScheduling):
    def __init__(self, config, log=None):
        super().__init__(config, log)
        self.seconds = load_durations()
        self.ordered = False

    def _split_scope(self, nodeid):
        path = nodeid.split("::", 1)[0]
        return nodeid if pathlib.Path(path).name in SPLIT else path

    def weight(self, scope):
        path = scope.split("::")[0]
        name = pathlib.Path(path).name
        tests = sum(len(unit) for s, unit in self.workqueue.items() if s.split("::")[0] == path)
        if name in self.seconds:
            share = len(self.workqueue.get(scope, {})) / max(tests, 1)
            return float(self.seconds[name]) * share
        return 10.0 * len(self.workqueue.get(scope, {}))

    def _assign_work_unit(self, node):
        if not self.ordered:  # the queue is complete once the first unit goes out
            weights = {scope: self.weight(scope) for scope in self.workqueue}
            for scope in sorted(self.workqueue, key=weights.get, reverse=True):
                self.workqueue.move_to_end(scope)
            self.ordered = True
        super()._assign_work_unit(node)
