"""CPU test of chunk_head.py's figures (run by ctest; the script itself needs the GPU): a made-up
profiler trace of two chunks, with overlapping kernels and a gap, read into head, launch, gpu,
busy, idle, first and tail, and into the kernels' times a chunk
and the gaps before each activity of a steady chunk."""
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
        one, two = chunk_head.chunk_figures(TRACE, marks)
        self.assertEqual(one, {"head": 10, "gpu": 70, "busy": 59, "idle": 11, "first": 10,
                               "tail": 20, "chunk": 100, "activities": 4, "launch": 6})
        self.assertEqual(two, {"head": 5, "gpu": 85, "busy": 84, "idle": 1, "first": 14,
                               "tail": 10, "chunk": 100, "activities": 2, "launch": 8})
        self.assertEqual(chunk_head.median_of([one, two], "first"), 12)

    def test_kernel_times_by_total_largest_first(self):
        marks = [e for e in TRACE if e["cat"] == "user_annotation"]
        rows = chunk_head.kernel_times(TRACE, marks)
        self.assertEqual([r["name"] for r in rows], ["conv", "copy", "relu"])  # not "outside"
        conv = rows[0]
        self.assertEqual((conv["per_chunk"], conv["median_us"], conv["total_us"]), (1.5, 29, 57))
        self.assertEqual(rows[1]["median_us"], 12)

    def test_gap_places_of_the_most_common_chunk_largest_first(self):
        marks = [e for e in TRACE if e["cat"] == "user_annotation"]
        # chunk 0 (4 activities) against chunk 1 (2): the first is the only one of the most
        # common count at a tie, the larger count wins
        rows = chunk_head.gap_places(TRACE, marks)
        self.assertEqual([(r["index"], r["name"], r["median_gap"]) for r in rows],
                         [(3, "relu", 10), (1, "conv", 1), (2, "conv", 0)])
        third = {"cat": "user_annotation", "name": "chunk2", "ts": 400, "dur": 100}
        more = TRACE + [third, kernel("copy", 400, 10), kernel("conv", 414, 50)]
        rows = chunk_head.gap_places(more, marks + [third])
        self.assertEqual([(r["index"], r["median_gap"]) for r in rows], [(1, 2.5)])
        self.assertEqual(chunk_head.gap_places(TRACE, []), [])


if __name__ == "__main__":
    unittest.main()
