"""tools/check-layers: the source tree follows its library layers, and each kind of violation is
caught with the file and line that commits it.

    python3 tests/python/test_check_layers.py SOURCE_DIR
"""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE = Path(sys.argv[1]).resolve()
CHECK = SOURCE / "tools" / "check-layers"


def check(root):
    return subprocess.run([sys.executable, str(CHECK), "--root", str(root)], capture_output=True, text=True)


class CheckLayers(unittest.TestCase):
    def test_the_tree_follows_its_layers(self):
        result = check(SOURCE)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("0 include(s) against the layers", result.stderr)

    def test_each_kind_of_violation_is_named(self):
        files = {
            # Allowed: the layer below, SimGrid in an engine-layer .cc, calibrate's struct.
            "sim/cost/ok.cc": '#include "sim/workload/graph.h"\n#include <simgrid/s4u.hpp>\n',
            "calibrate/ok.cc": '#include "sim/config/scenario.h"\n#include "sim/workload/kernel_shapes.h"\n',
            # Violations, one each.
            "sim/workload/up.h": '#include <vector>\n#include "sim/engine/engine.h"\n',
            "sim/report/simgrid.cc": "#include <simgrid/s4u.hpp>\n",
            "sim/engine/public.h": "#include <simgrid/s4u/Host.hpp>\n",
            "sim/report/internal.cc": '#include "sim/cost/flow_runner.h"\n',
            "calibrate/engine.cc": '#include "sim/engine/engine.h"\n',
            "sim/config/cuda.h": "#include <cuda_runtime_api.h>\n",
            "kernels/sim.cc": '#include "sim/config/types.h"\n',
        }
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            result = check(root)
        self.assertEqual(result.returncode, 1)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 7, result.stdout)
        expected = [
            ("calibrate/engine.cc:1:", "calibrate includes sim/engine/engine.h"),
            ("kernels/sim.cc:1:", "kernels includes sim/config/types.h; it may include nothing outside itself"),
            ("sim/config/cuda.h:1:", "sim/ includes a CUDA header"),
            ("sim/engine/public.h:1:", "a public header of the engine layer includes SimGrid"),
            ("sim/report/internal.cc:1:", "internal to the engine layer"),
            ("sim/report/simgrid.cc:1:", "sim/report includes SimGrid"),
            ("sim/workload/up.h:2:", "sim/workload includes sim/engine/engine.h"),
        ]
        for where, what in expected:
            self.assertTrue(any(line.startswith(where) and what in line for line in lines),
                            f"{where} {what}\n{result.stdout}")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
