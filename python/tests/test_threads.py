"""Concurrent run() on one session from Python threads (ORT releases the GIL while it runs):
every call gets its own input's ORT bits, with the node on actx."""

from __future__ import annotations

import threading

import numpy as np

from conftest import differing, inputs, on_actx, ort_alone, single_op_model, with_actx

THREADS = 8
RUNS = 20
# Large enough that the EP splits each run over ORT's intra-op pool too.
SHAPE = (128, 1024)


def test_concurrent_run(devices):
    model = single_op_model("Gelu", SHAPE, opset=20)
    sess = with_actx(model, devices, "all")
    assert on_actx(sess) == {"Gelu": 1}
    alone = ort_alone(model)
    xs = [inputs(SHAPE, seed=s) for s in range(THREADS)]
    expected = [alone.run(None, {"x": x})[0] for x in xs]

    errors = []
    start = threading.Barrier(THREADS)

    def worker(i: int) -> None:
        try:
            start.wait()
            for r in range(RUNS):
                got = sess.run(None, {"x": xs[i]})[0]
                n = differing(expected[i], got).size
                if n:
                    errors.append(f"thread {i} run {r}: {n} elements differ")
                    return
        except Exception as e:  # reported by the main thread
            errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    assert errors == []
