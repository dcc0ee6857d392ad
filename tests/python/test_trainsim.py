"""The Python entry point (python/trainsim) against the executable of this build: typed results that
agree with the command line's JSON, errors that keep the CLI's exit code and message, frames (with
pandas), and an install from the build tree into a virtual environment.

    python3 tests/python/test_trainsim.py BUILD_PYTHON_DIR SOURCE_DIR [install]

`install` runs only the installation check (skipped, exit 77, without python3-venv or python3-pip).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

BUILD_PYTHON = Path(sys.argv[1]).resolve()
SOURCE = Path(sys.argv[2]).resolve()
sys.path.insert(0, str(BUILD_PYTHON))
import trainsim  # noqa: E402

SCENARIO = SOURCE / "scenarios" / "00-gpt3-125m-1gpu.yaml"
TINY_SWEEP = SOURCE / "tests" / "sweep" / "fixtures" / "tiny.yaml"
CASE = SOURCE / "scenarios" / "validation" / "korthikanti-table4" / "baseline-forward.yaml"

try:
    import pandas  # noqa: F401
    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


class Run(unittest.TestCase):
    def test_typed_fields_are_the_reports(self):
        run = trainsim.run(SCENARIO, set={"training.micro_batch": 2}, network="ideal")
        cli = json.loads(subprocess.run(
            [trainsim.find_binary(), "run", str(SCENARIO), "--set", "training.micro_batch=2", "--network",
             "ideal", "--format", "json"], capture_output=True, text=True, check=True).stdout)
        self.assertEqual(run.iteration_time_s, cli["iteration_time_s"])
        self.assertEqual(run.plan["micro_batch"], 2)
        self.assertAlmostEqual(run.tokens_per_s * run.iteration_time_s, run.plan["tokens_per_iteration"],
                               delta=1e-6 * run.plan["tokens_per_iteration"])
        self.assertAlmostEqual(sum(run.breakdown.values()), run.iteration_time_s,
                               delta=1e-9 + 1e-6 * run.iteration_time_s)
        self.assertTrue(run.fits)
        self.assertGreater(run.mfu, 0)
        self.assertLess(run.mfu, 1)
        row = run.to_dict()
        self.assertEqual(row["plan.micro_batch"], 2)
        self.assertEqual(row["breakdown.compute_s"], run.breakdown["compute_s"])

    def test_bad_input_keeps_the_clis_message(self):
        with self.assertRaises(trainsim.InvalidInputError) as caught:
            trainsim.run(SCENARIO, set={"parallelism.tpp": 2})
        self.assertEqual(caught.exception.exit_code, 3)
        self.assertIn('unknown key "tpp" (did you mean "pp"?)', str(caught.exception))

    def test_a_plan_that_does_not_fit(self):
        with self.assertRaises(trainsim.InfeasibleError) as caught:
            trainsim.run(SCENARIO, set={"training.micro_batch": 512, "training.global_batch": 512})
        self.assertEqual(caught.exception.exit_code, 4)
        self.assertIn("infeasible plan", caught.exception.stderr)

    @unittest.skipUnless(HAVE_PANDAS, "python3-pandas is not installed")
    def test_frame(self):
        frame = trainsim.run(SCENARIO, network="ideal").to_frame()
        self.assertEqual(len(frame), 1)
        self.assertIn("breakdown.compute_s", frame.columns)


class Sweep(unittest.TestCase):
    def test_every_point_comes_back(self):
        listed = subprocess.run([trainsim.find_binary(), "sweep", str(TINY_SWEEP), "--list"], capture_output=True,
                                text=True, check=True).stdout
        count = sum(1 for line in listed.splitlines() if line and not line.startswith("#"))
        with tempfile.TemporaryDirectory() as out:
            result = trainsim.sweep(TINY_SWEEP, out=out, analytic=True, jobs=2)
            self.assertTrue((Path(out) / "results.jsonl").is_file())
        self.assertEqual(len(result.points), count)
        self.assertTrue(result.ok)
        self.assertLess(len(result.ok), count)  # the fixture has points that do not fit or are invalid
        best = result.best("tokens_per_s")
        self.assertEqual(best["tokens_per_s"], max(p["tokens_per_s"] for p in result.ok))
        if HAVE_PANDAS:
            frame = result.to_frame()
            self.assertEqual(len(frame), count)
            for column in ("seq_len", "micro_batch", "dtype", "status", "tokens_per_s", "point_id"):
                self.assertIn(column, frame.columns)


class Validate(unittest.TestCase):
    def test_one_case(self):
        result = trainsim.validate(CASE, jobs=1)
        self.assertEqual(len(result.cases), 1)
        case = result.cases[0]
        self.assertEqual(case["role"], "calibration")
        self.assertIn("korthikanti-table4", result.summary)
        if HAVE_PANDAS:
            frame = result.to_frame()
            self.assertIn("relative_error", frame.columns)


class Diff(unittest.TestCase):
    def test_metrics_move(self):
        d = trainsim.diff(SCENARIO, SCENARIO, set_b={"training.micro_batch": 2}, network="ideal")
        self.assertIn("metrics", d)
        self.assertTrue(any("micro_batch" in json.dumps(i) for i in d["inputs"]))


def install_check():
    """pip install --no-build-isolation of the build tree's package into a fresh virtual environment,
    then import it from elsewhere and run the executable it recorded."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                              capture_output=True, text=True)
        python = venv / "bin" / "python"
        if made.returncode != 0 or not python.exists():
            print("skipped: no python3-venv:", made.stderr.strip()[-200:])
            return 77
        check = subprocess.run([str(python), "-c", "import setuptools, pip, wheel"], capture_output=True)
        if check.returncode != 0:
            print("skipped: the virtual environment has no pip, setuptools or wheel (python3-pip)")
            return 77
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", "-q",
             str(BUILD_PYTHON)], capture_output=True, text=True, cwd=tmp)
        if install.returncode != 0:
            print(install.stdout, install.stderr)
            return 1
        use = subprocess.run(
            [str(python), "-c", "import trainsim; print(trainsim.__file__); print(trainsim.version().splitlines()[0])"],
            capture_output=True, text=True, cwd=tmp, env={k: v for k, v in os.environ.items() if k != "TRAINSIM"})
        print(use.stdout, use.stderr)
        if use.returncode != 0 or str(venv) not in use.stdout or "trainsim" not in use.stdout.splitlines()[-1]:
            return 1
        return 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[3] == "install":
        sys.exit(install_check())
    sys.exit(0 if unittest.main(argv=[sys.argv[0]], exit=False).result.wasSuccessful() else 1)
