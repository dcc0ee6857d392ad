"""calibrate/crosscheck/trim_trace.py: a trimmed trace reads as the whole one does.

    python3 tests/python/test_trim_trace.py TRAINSIM SOURCE_DIR

`trainsim compare` of the hand-made GPT-3 125M trace and of its trimmed copy measure the same step
times and kernel classes; --steps 1 keeps one step and what it launched; a request for more steps
than the trace holds fails with a message.
"""

import gzip
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TRAINSIM = Path(sys.argv[1]).resolve()
SOURCE = Path(sys.argv[2]).resolve()
TRIM = SOURCE / "calibrate" / "crosscheck" / "trim_trace.py"
SCENARIO = SOURCE / "scenarios" / "00-gpt3-125m-1gpu.yaml"
FIXTURE = SOURCE / "tests" / "measured" / "fixtures" / "kineto-gpt3-125m.json"


def compare(trace):
    out = subprocess.run([str(TRAINSIM), "compare", str(SCENARIO), "--trace", str(trace), "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    return report["steps"], report["step_time_s"]["measured"], {c["class"]: c["measured"] for c in report["classes"]}


def trim(source, out, *extra):
    return subprocess.run([sys.executable, str(TRIM), str(source), str(out), *extra], capture_output=True, text=True)


class TrimTrace(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def test_trimmed_trace_measures_the_same(self):
        out = self.tmp / "trimmed.json"
        self.assertEqual(trim(FIXTURE, out).returncode, 0)
        events = json.loads(out.read_text())["traceEvents"]
        self.assertLess(len(events), len(json.loads(FIXTURE.read_text())["traceEvents"]))
        self.assertFalse([e for e in events if e.get("cat") == "cpu_op" and e["name"] != "record_param_comms"])
        self.assertEqual(compare(out), compare(FIXTURE))

    def test_gzip_input_and_one_step(self):
        packed = self.tmp / "trace.json.gz"
        packed.write_bytes(gzip.compress(FIXTURE.read_bytes()))
        out = self.tmp / "one.json"
        self.assertEqual(trim(packed, out, "--steps", "1").returncode, 0)
        steps, _, classes = compare(out)
        self.assertEqual(len(steps), 1)
        self.assertTrue(classes)

    def test_too_few_steps_is_refused(self):
        result = trim(FIXTURE, self.tmp / "x.json", "--steps", "99")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("fewer than --steps 99", result.stderr)
        self.assertFalse((self.tmp / "x.json").exists())


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
