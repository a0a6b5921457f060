"""CPU test of chunk_head.py's figures (run by ctest; the script itself needs the GPU): a made-up
profiler trace of two chunks, with overlapping kernels and a gap, read into head, launch, gpu,
busy, idle, first and tail, into the kernels' times a chunk and into the gaps before each
activity of a steady chunk; and its --arm mode (processes in turns, their arguments, the
table), with the processes faked."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import chunk_head  # noqa: E402


def kernel(name, ts, dur):
    return {"cat": "kernel", "name": name, "ts": ts, "dur": dur}


TRACE = [
    {"cat": "user_annotation", "name": "chunk0", "ts": 0, "dur": 100},
    {"cat": "user_annotation", "name": "chunk1", "ts": 200, "dur": 100},
    {"cat": "cuda_driver", "name": "cuGraphLaunch", "ts": 15, "dur": 2},
    {"cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": 212, "dur": 2},
    # chunk 0: the copy 10-20, two kernels overlapping 21-50 and 45-60, then 70-80 (gaps of 1
    # and 10 us)
    kernel("copy", 10, 10), kernel("conv", 21, 29), kernel("conv", 45, 15), kernel("relu", 70, 10),
    # chunk 1: the copy 205-219, one kernel 220-290 (a gap of 1 us)
    kernel("copy", 205, 14), kernel("conv", 220, 70),
    kernel("outside", 150, 20),  # between the chunks: in neither
]


class ChunkHeadTest(unittest.TestCase):
    def test_union_length_counts_overlaps_once(self):
        self.assertEqual(chunk_head.union_length([(0, 10), (5, 12), (20, 25), (21, 22)]), 17)
        self.assertEqual(chunk_head.union_length([]), 0)

    def test_chunk_figures(self):
        marks = [e for e in TRACE if e["cat"] == "user_annotation"]
        one, two = chunk_head.chunk_figures(TRACE, chunk_head.chunk_activities(TRACE, marks))
        self.assertEqual(one, {"head": 10, "gpu": 70, "busy": 59, "idle": 11, "first": 10,
                               "tail": 20, "chunk": 100, "activities": 4, "launch": 6})
        self.assertEqual(two, {"head": 5, "gpu": 85, "busy": 84, "idle": 1, "first": 14,
                               "tail": 10, "chunk": 100, "activities": 2, "launch": 8})
        self.assertEqual(chunk_head.median_of([one, two], "first"), 12)

    def test_kernel_times_by_total_largest_first(self):
        marks = [e for e in TRACE if e["cat"] == "user_annotation"]
        rows = chunk_head.kernel_times(chunk_head.chunk_activities(TRACE, marks))
        self.assertEqual([r["name"] for r in rows], ["conv", "copy", "relu"])  # not "outside"
        conv = rows[0]
        self.assertEqual((conv["per_chunk"], conv["median_us"], conv["total_us"]), (1.5, 29, 57))
        self.assertEqual(rows[1]["median_us"], 12)

    def test_gap_places_of_the_most_common_chunk_largest_first(self):
        marks = [e for e in TRACE if e["cat"] == "user_annotation"]
        # chunk 0 (4 activities) against chunk 1 (2): the first is the only one of the most
        # common count at a tie, the larger count wins
        rows = chunk_head.gap_places(chunk_head.chunk_activities(TRACE, marks))
        self.assertEqual([(r["index"], r["name"], r["median_gap"]) for r in rows],
                         [(3, "relu", 10), (1, "conv", 1), (2, "conv", 0)])
        third = {"cat": "user_annotation", "name": "chunk2", "ts": 400, "dur": 100}
        more = TRACE + [third, kernel("copy", 400, 10), kernel("conv", 414, 50)]
        rows = chunk_head.gap_places(chunk_head.chunk_activities(more, marks + [third]))
        self.assertEqual([(r["index"], r["median_gap"]) for r in rows], [(1, 2.5)])
        self.assertEqual(chunk_head.gap_places(chunk_head.chunk_activities(TRACE, [])), [])

    def test_run_arms_takes_turns_none_first(self):
        calls = []

        def run_one(name, settings):
            calls.append((name, settings))
            return {"arm": name}

        runs = chunk_head.run_arms({"graph": {}, "off": {"PYGRAPH_MODE": "off"}}, 2, run_one)
        self.assertEqual([c[0] for c in calls], ["none", "graph", "off"] * 2)
        self.assertEqual(calls[0][1], None)
        self.assertEqual(calls[2][1], {"PYGRAPH_MODE": "off"})
        self.assertEqual([(r["arm"], r["round"]) for r in runs],
                         [("none", 1), ("graph", 1), ("off", 1),
                          ("none", 2), ("graph", 2), ("off", 2)])
        self.assertEqual(runs[4]["figures"], {"arm": "graph"})

    def test_child_args_drop_the_arms_and_the_output(self):
        argv = ["--workload", "resnet50-b64", "--arm", "graph:", "--arm=off:PYGRAPH_MODE=off",
                "--rounds", "3", "--lib=b/libpygraph.so", "--json", "out.json", "--shapes", "4"]
        self.assertEqual(chunk_head.child_args(argv),
                         ["--workload", "resnet50-b64", "--shapes", "4"])

    def test_arms_table_a_row_a_process_and_shape(self):
        fig = {"head": 1, "launch": 2, "gpu": 3, "busy": 2.5, "idle": 0.5, "first": 1,
               "tail": 4, "chunk": 9, "gaps": [{"index": 7, "median_gap": 1.25, "name": "k"}]}
        runs = [{"arm": "none", "round": 1, "figures": {"shapes": {"10": fig, "4": fig}}},
                {"arm": "graph", "round": 1, "figures": None}]
        lines = chunk_head.arms_table(runs).splitlines()
        self.assertEqual(len(lines), 4)
        self.assertTrue(lines[1].split()[:3] == ["none", "1", "4"], lines[1])
        self.assertTrue(lines[2].split()[:3] == ["none", "1", "10"], lines[2])
        self.assertIn("1.2 #7", lines[1])
        self.assertIn("no figures", lines[3])

    def test_bad_arms_stop_before_any_process(self):
        from unittest import mock
        for argv, says in ((["--arm", "graph"], "expected NAME:VAR=VALUE"),
                           (["--arm", "g:MODE=off"], "no PYGRAPH_VAR=VALUE"),
                           (["--arm", "none:"], "always run"),
                           (["--arm", "graph:", "--lib", "/no/such/libpygraph.so"], "no library")):
            with mock.patch.object(sys, "argv", ["chunk_head.py"] + argv), \
                    mock.patch("subprocess.run") as run:
                with self.assertRaises(SystemExit) as stop:
                    chunk_head.main()
                self.assertIn(says, str(stop.exception))
                run.assert_not_called()

    def test_arms_gathered_from_their_processes(self):
        import json
        import tempfile
        from unittest import mock
        seen = []

        def fake_run(cmd, env):
            seen.append((cmd, env))
            fig = {"head": 1.0, "gaps": []}
            with open(cmd[-1], "w") as f:  # --json FILE, last
                json.dump({"shapes": {"4": fig}, "preload": env.get("LD_PRELOAD")}, f)
            return mock.Mock(returncode=0)

        with tempfile.TemporaryDirectory() as d:
            lib, out = os.path.join(d, "libpygraph.so"), os.path.join(d, "out.json")
            open(lib, "w").close()
            argv = ["--workload", "resnet50-b64", "--shapes", "4", "--arm", "nohead:"
                    "PYGRAPH_EARLY_HEAD=0", "--rounds", "1", "--lib", lib, "--json", out]
            with mock.patch.object(sys, "argv", ["chunk_head.py"] + argv), \
                    mock.patch("subprocess.run", side_effect=fake_run):
                self.assertEqual(chunk_head.main(), 0)
            got = json.load(open(out))
        self.assertEqual([r["arm"] for r in got["runs"]], ["none", "nohead"])
        self.assertEqual(got["runs"][0]["figures"]["preload"], None)
        self.assertEqual(got["runs"][1]["figures"]["preload"], lib)
        self.assertEqual(seen[1][1]["PYGRAPH_EARLY_HEAD"], "0")
        self.assertEqual(seen[0][0][2:6], ["--workload", "resnet50-b64", "--shapes", "4"])
        self.assertEqual(seen[0][0][-2], "--json")


if __name__ == "__main__":
    unittest.main()
