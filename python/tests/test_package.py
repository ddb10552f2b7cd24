"""The installed package: the bundled library, its exports, that it needs nothing of ORT, and
`python -m actx_ep`."""

from __future__ import annotations

import ctypes
import os
import pathlib
import subprocess
import sys
from importlib import metadata

import actx_ep


def test_names():
    assert actx_ep.get_ep_name() == actx_ep.EP_NAME == "actx"
    assert actx_ep.get_ep_names() == ["actx"]


def test_library_path():
    path = pathlib.Path(actx_ep.get_library_path())
    assert path.is_absolute() and path.is_file()
    assert path.name == "libactx_ep.so"
    assert path.parent == pathlib.Path(actx_ep.__file__).resolve().parent


def test_exports():
    lib = ctypes.CDLL(actx_ep.get_library_path())
    for name in ("CreateEpFactories", "ReleaseEpFactory", "actx_ep_info"):
        assert hasattr(lib, name), name
    # libactx is linked in statically and stays hidden: no clash with another copy of it.
    for name in ("actx_compute", "actx_gelu_f32", "actx_ep_claim"):
        assert not hasattr(lib, name), name


def test_wheel_has_nothing_of_ort():
    dist = metadata.distribution("actx-ep")
    assert dist.version == actx_ep.__version__
    # No dependency but oneDNN's library (x86-64: the bfloat16 MatMul / Gemm / Conv), never
    # onnxruntime; the converter's extra ([convert]) asks for onnx and numpy only.
    plain = [r for r in dist.requires or [] if "extra ==" not in r]
    assert [r.split(";")[0].strip() for r in plain] == ["onednn-cpu-gomp==2023.2.0"], dist.requires
    extra = sorted(r.split(">")[0].split(";")[0].strip() for r in dist.requires or []
                   if "extra ==" in r)
    assert extra == ["numpy", "onnx"], dist.requires
    files = [str(f) for f in dist.files or []]
    assert any(f.endswith("actx_ep/libactx_ep.so") for f in files), files
    assert not [f for f in files if "onnxruntime" in f.lower()], files


def test_loads_without_ort():
    """In a process that never imports onnxruntime the library loads and reports itself, and
    nothing of ORT is mapped: it does not link libonnxruntime."""
    code = (
        "import actx_ep, sys\n"
        "facts = actx_ep.info()\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'onnxruntime' not in sys.modules, 'onnxruntime imported'\n"
        "assert 'libonnxruntime' not in maps, 'libonnxruntime mapped'\n"
        "assert 'libactx_ep.so' in maps\n"
        "print(facts['version'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == actx_ep.info()["version"]


def test_info():
    facts = actx_ep.info()
    assert facts["version"] == actx_ep.__version__
    assert facts["isa"] in ("avx512", "avx2", "portable")
    assert facts["nan_rule"] in ("avx2", "avx512")
    assert facts["library"] == actx_ep.get_library_path()


def run_main(**env):
    return subprocess.run([sys.executable, "-m", "actx_ep"], capture_output=True, text=True,
                          env={**os.environ, **env})


def test_main_prints_version_isa_rule_library():
    out = run_main()
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(":", 1) for line in out.stdout.splitlines()[1:])
    assert out.stdout.splitlines()[0] == f"actx-ep {actx_ep.__version__}"
    assert lines["EP name"].strip() == "actx"
    assert lines["library"].strip().startswith(actx_ep.get_library_path() + " (version ")
    assert lines["ISA"].strip() == actx_ep.info()["isa"]
    assert lines["NaN rule"].strip() == actx_ep.info()["nan_rule"]


def test_main_follows_actx_isa():
    """ACTX_ISA chooses the kernels' path; the report says which one runs."""
    out = run_main(ACTX_ISA="portable")
    assert out.returncode == 0, out.stderr
    assert "ISA:      portable" in out.stdout.splitlines()
