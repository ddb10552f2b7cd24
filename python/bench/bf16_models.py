"""`make bench`'s bfloat16-model section: each model of BF16_MODELS (the issue's two) and
MORE_MODELS (the general case; listed, with their inputs, in models/manifest.txt) against its
bfloat16 twin (actx_ep.convert), in four arms:

  ort-f32    ORT alone on the float32 original: the baseline
  ort-bf16   ORT alone on the twin: ORT 1.30's CPU EP has no bfloat16 arithmetic, so it fails to
             load; its message is printed
  actx-bf16  ORT + actx (policy auto) on the twin
  nxrt-bf16  the nxrt-ep-cpu plugin EP (PyPI) on the twin, as `actx ab --peer` loads a peer

For each: the session's peak RSS (peak after creating it and one run, minus the process's RSS
before; one child process per arm, so that sessions do not share a peak), the time of one run at
1 and 2 intra-op threads (the arms that load, interleaved run by run in this one process:
medians), the ratio ort-f32 / actx-bf16, and accuracy: the actx arm's outputs against the
float32 twin (the same rounded weights computed in float32: what the EP's kernels answer for)
and the float32 original (what a user compares with). An arm that cannot load is reported with
ORT's message and skipped; the section never fails `make bench` for it.

    python python/bench/bf16_models.py [--quick] [--models a,b] [--out results]

The twins are made once and cached beside the fetched models, keyed by the converter's source.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

# numpy's BLAS pool would start a thread a core that polls beside the sessions' threads; the
# section times ORT, not numpy (set before numpy loads it).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from actx_ep import convert  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = REPO / "models" / "manifest.txt"
FETCH = REPO / "scripts" / "fetch-models.sh"


@dataclass(frozen=True)
class Bf16Model:
    output: str      # the output the accuracy is measured on
    metric: str      # "cosine": per input, of that output; "rel_l2": ||a - b|| / ||b|| over it;
                     # "max_abs": max |a - b| (probabilities near 0, where relative means nothing)
    bound: float     # cosine >= bound, or rel_l2 <= bound
    against: str     # the reference the bound is stated against: "original" or "twin"
    inputs: int      # how many varied inputs the accuracy is measured over (--quick: 4)


#: The bfloat16 section's models (names of models/manifest.txt) and their accuracy bounds.
BF16_MODELS: Dict[str, Bf16Model] = {
    # Output 461: the sentence embedding (the model's own mean pooling over unmasked tokens).
    "minilm-l3": Bf16Model("461", "cosine", 0.999, "original", 32),
    "yolov8n": Bf16Model("output0", "rel_l2", 0.01, "twin", 8),
}

#: Real models beyond those the issue names (the general case), timed the same way: PaddleOCR's
#: PP-OCRv4 detector (its text-probability map, near 0 on these text-free scenes: absolute
#: error) and recogniser (its per-step character probabilities), and RapidOCR's MobileNetV3
#: orientation classifier (its four probabilities: absolute error). No targets of their own.
MORE_MODELS: Dict[str, Bf16Model] = {
    "ppocr-det": Bf16Model("sigmoid_0.tmp_0", "max_abs", 0.01, "twin", 4),
    "ppocr-rec": Bf16Model("softmax_11.tmp_0", "rel_l2", 0.06, "twin", 8),
    "rapid-orient": Bf16Model("fetch_name_0", "max_abs", 0.05, "twin", 8),
}
SECTION_MODELS: Dict[str, Bf16Model] = {**BF16_MODELS, **MORE_MODELS}

ARMS = ("ort-f32", "ort-bf16", "actx-bf16", "nxrt-bf16")
NXRT_REGISTRATION = "nxrt_ep_cpu"
RECORD_ASSIGNMENT = "session.record_ep_graph_assignment_info"

#: Ops ORT's CPU EP runs on bfloat16 by moving bytes only (no arithmetic): on ORT's side of a twin
#: they are expected; any other bfloat16 node there is compute the EP left to ORT. And the ONNX ops
#: of the exact-activation service (src/ops.h), which already run in bfloat16.
ORT_BF16_MOVERS = convert.ORT_BF16_MOVERS
ACTIVATION_OPS = convert.ACTIVATION_OPS


def bf16_service_ops() -> set:
    """The op types of the bfloat16 service's table (src/bf16/bf16_ops.h: its X(name, ...) rows)."""
    import re

    text = (REPO / "src" / "bf16" / "bf16_ops.h").read_text()
    return set(re.findall(r"^\s*X\((\w+),", text, re.M))


def one_node_model(model: Any, node: Any) -> bytes:
    """A model of one node of a (type-inferred) model: its inputs graph inputs or the model's
    initializers and Constants, at the model's opsets."""
    from onnx import helper

    g = model.graph
    values = {v.name: v for v in list(g.input) + list(g.value_info) + list(g.output)}
    inits = {t.name: t for t in g.initializer}
    consts = {n.output[0]: n for n in g.node if n.op_type == "Constant"}
    ins, init, nodes = [], [], []
    for x in (i for i in node.input if i):
        if x in inits:
            init.append(inits[x])
        elif x in consts:
            nodes.append(consts[x])
        else:
            ins.append(values[x])
    outs = [values[x] for x in node.output if x]
    graph = helper.make_graph(nodes + [node], "one", ins, outs, init)
    return helper.make_model(graph, opset_imports=model.opset_import,
                             ir_version=model.ir_version).SerializeToString()


# ---- the models, their twins and inputs --------------------------------------------------------


def cache_dir() -> pathlib.Path:
    base = os.environ.get("ACTX_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "actx")
    return pathlib.Path(base) / "models"


def manifest_line(name: str) -> Dict[str, str]:
    """The manifest's line for a model: sha256 and its input recipe."""
    for line in MANIFEST.read_text().splitlines():
        f = line.split()
        if f and not f[0].startswith("#") and f[0] == name:
            return {"name": f[0], "sha256": f[4], "inputs": f[9]}
    raise KeyError(f"{name} is not in {MANIFEST}")


def fetch(names: Sequence[str]) -> Tuple[int, str]:
    """scripts/fetch-models.sh for these models: (exit code, its messages). 3: no network."""
    got = subprocess.run([str(FETCH), "--only", ",".join(names)], capture_output=True, text=True)
    return got.returncode, got.stderr.strip()


def original_path(name: str) -> pathlib.Path:
    sha = manifest_line(name)["sha256"]
    return cache_dir() / f"{name}-{sha[:12]}.onnx"


def twins(name: str) -> Tuple[pathlib.Path, pathlib.Path]:
    """(bfloat16 twin, its float32 twin), made once from the cached original, keyed by the
    converter's source (a changed converter makes new twins, no stale one is used); written
    under a temporary name and renamed (concurrent readers)."""
    import hashlib


    key = hashlib.sha256(pathlib.Path(convert.__file__).read_bytes()).hexdigest()[:12]
    src = original_path(name)
    stem = src.with_suffix("")
    bf16 = pathlib.Path(f"{stem}.bf16-{key}.onnx")
    f32 = pathlib.Path(f"{stem}.f32twin-{key}.onnx")
    if not (bf16.is_file() and f32.is_file()):
        twin = convert.to_bfloat16(str(src))
        for model, path in ((twin, bf16), (convert.to_float32(twin), f32)):
            part = path.with_name(path.name + f".{os.getpid()}.part")
            convert.save(model, str(part))
            os.replace(part, path)
    return bf16, f32


def _recipe(name: str) -> Dict[str, Tuple[str, List[int]]]:
    out = {}
    for item in manifest_line(name)["inputs"].split(","):
        input_name, kind = item.split("=", 1)
        kind, _, shape = kind.partition(":")
        out[input_name] = (kind, [int(d) for d in shape.split("x")] if shape else [])
    return out


_PLAIN_KINDS = ("audio", "uniform", "zeros", "const")


def _input_dtypes(name: str) -> Dict[str, Any]:
    """The numpy element type of each of the original model's inputs."""
    import onnx
    from onnx import helper

    graph = onnx.load(str(original_path(name)), load_external_data=False).graph
    return {v.name: helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)
            for v in graph.input}


def _plain_input(rng: Any, kind: str, shape: List[int], dtype: Any) -> np.ndarray:
    """One input of an audio, uniform/LO/HI, zeros or const/V recipe."""
    what, *args = kind.split("/")
    if what == "zeros":
        return np.zeros(shape, dtype)
    if what == "const":
        return np.full(shape, float(args[0])).astype(dtype)
    lo, hi = (-1.0, 1.0) if what == "audio" else (float(args[0]), float(args[1]))
    if np.issubdtype(dtype, np.integer):  # [LO, HI), as `actx ab` truncates its uniform draws
        return rng.integers(int(lo), int(hi), shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def timing_inputs(name: str) -> Dict[str, np.ndarray]:
    """The inputs runs are timed with: the manifest's recipe (MiniLM: 1 x 128 tokens)."""
    return accuracy_inputs(name, 1, seed=12345)[0]


def accuracy_inputs(name: str, count: int, seed: int = 0) -> List[Dict[str, np.ndarray]]:
    """Varied inputs of the manifest's shapes. Token ids: [CLS] random words [SEP], lengths
    spread over the sequence, the rest padding (attention mask 0). Images: smooth random scenes
    (low-frequency colour fields plus fine noise) in [0, 1], then (p - MEAN) / STD as the
    recipe's image/MEAN/STD says. The other kinds (the manifest's header), for the inputs that
    are neither tokens nor images: audio uniform in [-1, 1], uniform/LO/HI (integers in
    [LO, HI) for an integer input), zeros, const/V; of the input's element type in the model."""
    rng = np.random.default_rng(seed)
    recipe = _recipe(name)
    tokens = {"input_ids", "attention_mask"} if "input_ids" in recipe else set()
    plain = [n for n, (kind, _) in recipe.items()
             if n not in tokens and kind.split("/")[0] in _PLAIN_KINDS]
    dtypes = _input_dtypes(name) if plain else {}
    feeds = []
    for k in range(count):
        feed: Dict[str, np.ndarray] = {}
        if "input_ids" in recipe:
            _, (batch, seq) = recipe["input_ids"]
            length = seq if count == 1 else int(np.linspace(4, seq, count)[k])
            ids = np.zeros((batch, seq), np.int64)
            ids[:, :length] = rng.integers(1000, 30000, (batch, length))
            ids[:, 0], ids[:, length - 1] = 101, 102
            mask = np.zeros((batch, seq), np.int64)
            mask[:, :length] = 1
            feed["input_ids"], feed["attention_mask"] = ids, mask
        for input_name, (kind, shape) in recipe.items():
            if kind.startswith("image"):
                n, c, h, w = shape
                coarse = rng.random((n, c, h // 16, w // 16))
                smooth = np.kron(coarse, np.ones((1, 1, 16, 16)))
                img = 0.8 * smooth + 0.2 * rng.random(shape)
                mean, std = (float(v) for v in kind.split("/")[1:3])
                feed[input_name] = ((img - mean) / std).astype(np.float32)
            elif input_name in plain:
                feed[input_name] = _plain_input(rng, kind, shape, dtypes[input_name])
        feeds.append(feed)
    return feeds


# ---- sessions ----------------------------------------------------------------------------------


def _ort() -> Any:
    import onnxruntime as ort

    ort.set_default_logger_severity(3)
    return ort


def session(arm: str, model: pathlib.Path, threads: int) -> Any:
    """An ORT session of one arm; raises with ORT's message when it cannot load the model."""
    ort = _ort()
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.add_session_config_entry(RECORD_ASSIGNMENT, "1")
    # The arms' sessions share this process and its cores, each with its own intra-op pool.
    # Within a Run() the threads spin between parallel regions, ORT's default (what a user's
    # session does); ORT's force_spinning_stop ends the spinning when Run() returns, so that an
    # idle arm's pool does not take the cores from the arm being timed (with the default, ORT
    # alone ran slower at 2 threads than at 1). All arms alike. A null control (ORT alone
    # against ORT alone, 2 threads, 2-core Xeon) gave 0.99-1.01 this way, as with spinning off;
    # with spinning off, every parallel region woke a sleeping thread (about 30 us in a VM),
    # which made both arms slower (ORT alone on MiniLM-L3 7.5 against 6.4 ms), ours more.
    if threads != 1:
        so.add_session_config_entry("session.force_spinning_stop", "1")
    if arm in ("ort-f32", "ort-bf16"):
        return ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    if arm == "actx-bf16":
        import actx_ep

        so.add_provider_for_devices(actx_ep.register(ort), actx_ep.provider_options("auto"))
    elif arm == "nxrt-bf16":
        try:
            import nxrt_ep_cpu
        except ImportError as e:
            raise RuntimeError("nxrt-ep-cpu is not installed (pip install nxrt-ep-cpu)") from e
        path = nxrt_ep_cpu.get_library_path()
        ours = [d for d in ort.get_ep_devices() if dict(d.ep_metadata).get("library_path") == path]
        if not ours:
            ort.register_execution_provider_library(NXRT_REGISTRATION, path)
            ours = [d for d in ort.get_ep_devices()
                    if dict(d.ep_metadata).get("library_path") == path]
        so.add_provider_for_devices(ours[:1], {})
    else:
        raise ValueError(arm)
    return ort.InferenceSession(str(model), so, enable_fallback=0)


def assignment(s: Any) -> Dict[str, Dict[str, int]]:
    """EP name -> op type -> nodes it runs."""
    out: Dict[str, Dict[str, int]] = {}
    for sub in s.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            ops = out.setdefault(sub.ep_name, {})
            ops[node.op_type] = ops.get(node.op_type, 0) + 1
    return out


def bf16_left_to_ort(s: Any, twin: pathlib.Path) -> Dict[str, int]:
    """The twin's bfloat16 compute nodes (not byte movers) that ORT's CPU EP runs: none when the
    EP serves the whole twin."""

    compute = {n.name for n in convert.bf16_nodes(str(twin)) if n.op_type not in ORT_BF16_MOVERS}
    left: Dict[str, int] = {}
    for sub in s.get_provider_graph_assignment_info():
        if sub.ep_name != "CPUExecutionProvider":
            continue
        for node in sub.get_nodes():
            if node.name in compute:
                left[node.op_type] = left.get(node.op_type, 0) + 1
    return left


def _status() -> Dict[str, int]:
    facts = {}
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            facts[key] = int(value.split()[0])
    return facts


def child(arm: str, model: str, threads: int, name: str) -> Dict[str, Any]:
    """In a process of its own: the session's peak RSS (KiB) after creating it and one run, minus
    the RSS before; or ORT's message when it does not load."""
    feeds = timing_inputs(name)
    _ort()
    if arm == "actx-bf16":
        import actx_ep

        actx_ep.register(_ort())
    try:  # the peak so far forgotten: VmHWM restarts from the current RSS
        pathlib.Path("/proc/self/clear_refs").write_text("5")
        reset = True
    except OSError:
        reset = False
    before = _status()["VmRSS"]
    try:
        s = session(arm, pathlib.Path(model), threads)
        s.run(None, feeds)
    except Exception as e:
        return {"ok": False, "error": " ".join(str(e).split())}
    after = _status()
    peak = after["VmHWM"] if reset else after["VmRSS"]
    return {"ok": True, "rss_kib": peak - before, "peak_reset": reset}


def measure_in_child(arm: str, model: pathlib.Path, threads: int, name: str) -> Dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", arm, str(model), str(threads), name]
    got = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if got.returncode != 0:  # a crash is an arm's failure, not the bench's
        tail = (got.stderr.strip().splitlines() or ["(no message)"])[-1]
        return {"ok": False, "error": f"the process exited with {got.returncode}: {tail}"}
    return json.loads(got.stdout.strip().splitlines()[-1])


# ---- accuracy ----------------------------------------------------------------------------------


def accuracy(spec: Bf16Model, got: List[np.ndarray], ref: List[np.ndarray]) -> float:
    """The worst over inputs: the least cosine, or the largest relative L2 or absolute error."""
    values = []
    for a, b in zip(got, ref):
        a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
        if spec.metric == "cosine":
            values.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
        elif spec.metric == "max_abs":
            values.append(float(np.max(np.abs(a - b))))
        else:
            values.append(float(np.linalg.norm(a - b) / np.linalg.norm(b)))
    return min(values) if spec.metric == "cosine" else max(values)


def meets(spec: Bf16Model, value: float) -> bool:
    return value >= spec.bound if spec.metric == "cosine" else value <= spec.bound


def outputs(s: Any, spec: Bf16Model, feeds: List[Dict[str, np.ndarray]]) -> List[np.ndarray]:
    return [s.run([spec.output], f)[0] for f in feeds]


# ---- the section -------------------------------------------------------------------------------


def time_interleaved(sessions: Dict[str, Any], feeds: Dict[str, np.ndarray], rounds: int,
                     warmup: int = 2) -> Dict[str, float]:
    """Median ms of one run per arm, the arms taking turns run by run (drift hits all alike)."""
    for s in sessions.values():
        for _ in range(warmup):
            s.run(None, feeds)
    times: Dict[str, List[float]] = {a: [] for a in sessions}
    for _ in range(rounds):
        for arm, s in sessions.items():
            t = time.perf_counter()
            s.run(None, feeds)
            times[arm].append((time.perf_counter() - t) * 1e3)
    return {a: statistics.median(v) for a, v in times.items()}


def run_model(name: str, quick: bool, rows: List[Dict[str, Any]]) -> None:
    spec = SECTION_MODELS[name]
    original = original_path(name)
    twin, f32_twin = twins(name)
    path = {"ort-f32": original, "ort-bf16": twin, "actx-bf16": twin, "nxrt-bf16": twin}
    print(f"\n{name}: twin {twin.name}")
    loaded: Dict[str, Dict[str, Any]] = {}
    for arm in ARMS:
        r = measure_in_child(arm, path[arm], 1, name)
        loaded[arm] = r
        if r["ok"]:
            print(f"  {arm:10s} loads; session peak RSS {r['rss_kib'] / 1024:7.1f} MiB")
        else:
            print(f"  {arm:10s} does not load: {r['error'][:300]}")
    if loaded["actx-bf16"]["ok"] and loaded["ort-f32"]["ok"]:
        ratio = loaded["actx-bf16"]["rss_kib"] / max(1, loaded["ort-f32"]["rss_kib"])
        print(f"  memory: actx-bf16 / ort-f32 = {ratio:.2f}")
    else:
        print("  actx-bf16: skipped (the EP cannot yet load the twin: timing and accuracy "
              "need it)")

    rounds = 5 if quick else 30
    feeds = timing_inputs(name)
    for threads in (1, 2):
        sessions = {a: session(a, path[a], threads) for a in ARMS if loaded[a]["ok"]}
        if threads == 1 and "actx-bf16" in sessions:
            left = bf16_left_to_ort(sessions["actx-bf16"], twin)
            on = assignment(sessions["actx-bf16"]).get("actx", {})
            print(f"  actx-bf16 runs {sum(on.values())} nodes; bfloat16 compute left to ORT: "
                  f"{left or 'none'}")
        ms = time_interleaved(sessions, feeds, rounds)
        line = ", ".join(f"{a} {t:.2f} ms" for a, t in ms.items())
        ratio = ""
        if "actx-bf16" in ms:
            ratio = f"; ort-f32 / actx-bf16 = {ms['ort-f32'] / ms['actx-bf16']:.2f}x"
            if "nxrt-bf16" in ms:
                ratio += f"; nxrt-bf16 / actx-bf16 = {ms['nxrt-bf16'] / ms['actx-bf16']:.2f}x"
        print(f"  {threads} thread{'s' if threads > 1 else ''}: {line}{ratio}")
        for arm in ARMS:
            rows.append({
                "model": name, "arm": arm, "threads": threads,
                "loads": int(loaded[arm]["ok"]),
                "ms": f"{ms[arm]:.4f}" if arm in ms else "",
                "rss_mib": f"{loaded[arm]['rss_kib'] / 1024:.1f}" if loaded[arm]["ok"] else "",
                "error": "" if loaded[arm]["ok"] else loaded[arm]["error"][:200],
            })
        del sessions

    count = 4 if quick else spec.inputs
    acc_feeds = accuracy_inputs(name, count)
    refs = {
        "original": outputs(session("ort-f32", original, 2), spec, acc_feeds),
        "twin": outputs(session("ort-f32", f32_twin, 2), spec, acc_feeds),
    }
    what = {"cosine": "least cosine", "max_abs": "largest absolute error"}.get(
        spec.metric, "largest relative L2 error")
    floor = accuracy(spec, refs["twin"], refs["original"])
    print(f"  accuracy over {count} inputs ({what} of output {spec.output}; bound "
          f"{spec.bound} against the float32 {spec.against}):")
    print(f"    float32 twin (rounded weights, float32 compute) vs original: {floor:.6f}")
    for arm in ("actx-bf16", "nxrt-bf16"):
        if not loaded[arm]["ok"]:
            continue
        got = outputs(session(arm, twin, 2), spec, acc_feeds)
        for ref in ("twin", "original"):
            v = accuracy(spec, got, refs[ref])
            verdict = ("ok" if meets(spec, v) else "OUT OF BOUND") if ref == spec.against else ""
            print(f"    {arm} vs float32 {ref}: {v:.6f} {verdict}")
            for row in rows:
                if row["model"] == name and row["arm"] == arm:
                    row[f"vs_{ref}"] = f"{v:.6f}"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="5 timed rounds, 4 accuracy inputs")
    p.add_argument("--models", default=",".join(SECTION_MODELS))
    p.add_argument("--out", default=str(REPO / "results"))
    p.add_argument("--child", nargs=4, metavar=("ARM", "MODEL", "THREADS", "NAME"),
                   help=argparse.SUPPRESS)
    a, ignored = p.parse_known_args(argv)  # BENCH_ARGS also carries actx ab's options
    if a.child:
        arm, model, threads, name = a.child
        print(json.dumps(child(arm, model, int(threads), name)))
        return 0
    names = [n for n in a.models.split(",") if n]
    unknown = [n for n in names if n not in SECTION_MODELS]
    if unknown:
        print(f"bf16 models: not in the section: {', '.join(unknown)}", file=sys.stderr)
        return 2
    print("bfloat16 models: ORT alone on the float32 original vs ORT + actx on the bfloat16 twin"
          + (" (--quick)" if a.quick else ""))
    try:  # what the section needs, or a skip saying what is missing
        import actx_ep.convert  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        print(f"bfloat16 models: skipped: {e}")
        return 0
    rc, msg = fetch(names)
    if rc == 3:
        print(f"bfloat16 models: skipped: the models cannot be fetched ({msg})")
        return 0
    if rc != 0:
        print(f"bfloat16 models: fetching failed: {msg}", file=sys.stderr)
        return 1
    rows: List[Dict[str, Any]] = []
    for name in names:
        run_model(name, a.quick, rows)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    fields = ["model", "arm", "threads", "loads", "ms", "rss_mib", "vs_twin", "vs_original",
              "error"]
    with open(out / "bf16-models.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)
    print(f"\nCSV: {out / 'bf16-models.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
