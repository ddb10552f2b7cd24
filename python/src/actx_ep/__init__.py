"""actx-ep: the actx ONNX Runtime plugin execution provider, packaged for Python.

The wheel carries ``libactx_ep.so`` and nothing of ONNX Runtime: install the ``onnxruntime``
you use (1.30 or newer) beside it. The plain ORT route needs only two facts from here::

    import onnxruntime as ort
    import actx_ep

    ort.register_execution_provider_library(actx_ep.get_ep_name(), actx_ep.get_library_path())
    devices = [d for d in ort.get_ep_devices() if d.ep_name == actx_ep.get_ep_name()]
    so = ort.SessionOptions()
    so.add_provider_for_devices(devices, {"policy": "auto"})

The helpers below do the same with checks: :func:`register` (idempotent, returns the
devices), :func:`get_ep_devices`, :func:`provider_options` (validates ``policy`` before ORT
sees it) and :func:`unregister`.
"""

from __future__ import annotations

import ctypes
import pathlib
from typing import Any, Dict, List, Optional

__all__ = [
    "EP_NAME",
    "PROVIDER_OPTIONS",
    "POLICIES",
    "get_library_path",
    "get_ep_name",
    "get_ep_names",
    "get_ep_devices",
    "provider_options",
    "register",
    "unregister",
    "info",
    "__version__",
]

#: The EP's name: what ``ort.get_ep_devices()`` reports as ``ep_name``, what a session's node
#: assignment shows, and the ``<name>`` of the session config keys ``ep.<name>.<option>`` that
#: ORT files provider options under. Also the default registration name.
EP_NAME = "actx"

#: The values of the ``policy`` provider option.
POLICIES = ("auto", "all", "none")

#: Every provider option the EP reads: name -> its default, its values and what it does. Values
#: are strings, as ``SessionOptions.add_provider_for_devices(devices, options)`` takes them.
PROVIDER_OPTIONS: Dict[str, Dict[str, Any]] = {
    "policy": {
        "default": "auto",
        "values": POLICIES,
        "doc": (
            "which nodes the EP takes: 'auto' those where it is measured faster than ORT's own "
            "CPU kernels (and none whose taking would stop an ORT fusion); 'all' every node it "
            "can run; 'none' nothing (ORT runs the whole model, for A/B comparisons). The "
            "results are ORT's bits whichever is chosen."
        ),
    },
}

_LIBRARY_NAME = "libactx_ep.so"
_PACKAGE_DIR = pathlib.Path(__file__).resolve().parent

# The name register() registered the library under, for unregister()'s default.
_registered_name: Optional[str] = None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("actx-ep")
    except PackageNotFoundError:  # imported from a source tree, not installed
        return "unknown"


__version__ = _version()


def get_library_path() -> str:
    """The absolute path of the bundled ``libactx_ep.so`` (what ORT's registration needs)."""
    path = _PACKAGE_DIR / _LIBRARY_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{_LIBRARY_NAME} is not in {_PACKAGE_DIR}: this actx_ep was not installed from its "
            "wheel (pip install ./python builds one), or the installation is incomplete"
        )
    return str(path)


def get_ep_name() -> str:
    """The EP's name, ``"actx"``."""
    return EP_NAME


def get_ep_names() -> List[str]:
    """Every EP name this package provides (one)."""
    return [EP_NAME]


def provider_options(policy: str = "auto", **others: Any) -> Dict[str, str]:
    """The provider options dict for ``add_provider_for_devices``, checked.

    ORT itself only reports a bad value when the session is created, and ORT 1.30 / 1.31's
    Python ``InferenceSession`` then prints the error and silently retries on the CPU EP alone;
    checking here turns that into a ValueError at the call that made the mistake.
    """
    if others:
        unknown = ", ".join(sorted(others))
        raise ValueError(
            f"actx EP: unknown provider option(s) {unknown}; known: {', '.join(PROVIDER_OPTIONS)}"
        )
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ValueError(
            f"actx EP: provider option 'policy' is {policy!r}; expected one of "
            f"{', '.join(POLICIES)}"
        )
    return {"policy": policy}


def _onnxruntime(ort: Any) -> Any:
    if ort is not None:
        return ort
    try:
        import onnxruntime
    except ImportError as e:
        raise ImportError(
            "actx EP: onnxruntime is not installed; actx-ep does not depend on it so that you "
            "can choose the build (pip install onnxruntime)"
        ) from e
    return onnxruntime


def _all_actx_devices(ort: Any) -> List[Any]:
    return [d for d in ort.get_ep_devices() if d.ep_name == EP_NAME]


def _one_per_hardware(devices: List[Any]) -> List[Any]:
    # The library registered under two names offers each CPU twice, and ORT refuses devices of
    # two registrations in one add_provider_for_devices call: keep the first of each.
    seen, kept = set(), []
    for d in devices:
        hw = (str(d.device.type), d.device.vendor_id, d.device.device_id)
        if hw not in seen:
            seen.add(hw)
            kept.append(d)
    return kept


def _device_library(device: Any) -> Optional[str]:
    # ORT records where each plugin EP device's library came from.
    return dict(device.ep_metadata).get("library_path")


def get_ep_devices(ort: Any = None) -> List[Any]:
    """The ``OrtEpDevice`` objects of the actx EP (one per CPU) from ``ort.get_ep_devices()``.

    ``ort`` is the onnxruntime module (imported when None). Raises RuntimeError when the
    library is not registered: call :func:`register` first.
    """
    ort = _onnxruntime(ort)
    devices = _one_per_hardware(_all_actx_devices(ort))
    if not devices:
        raise RuntimeError(
            "actx EP: no device named 'actx' in onnxruntime.get_ep_devices(); register the "
            "library first (actx_ep.register(onnxruntime))"
        )
    return devices


def register(ort: Any = None, name: str = EP_NAME) -> List[Any]:
    """Registers the bundled library with ORT under ``name`` and returns the EP's devices.

    Idempotent: when this library is already registered (by this function or by a direct
    ``register_execution_provider_library`` call, under any name), nothing is registered again
    and its devices are returned, so that no model sees two actx devices. Raises RuntimeError
    when another copy of the actx library is registered, or ``name`` is taken by another
    library.
    """
    ort = _onnxruntime(ort)
    if not hasattr(ort, "register_execution_provider_library"):
        raise RuntimeError(
            f"actx EP: onnxruntime {getattr(ort, '__version__', '?')} cannot load plugin EPs; "
            "the actx EP needs onnxruntime 1.30 or newer"
        )
    path = get_library_path()
    existing = _all_actx_devices(ort)
    if existing:
        others = sorted({p for p in map(_device_library, existing) if p and p != path})
        if others:
            raise RuntimeError(
                f"actx EP: another actx library is registered ({', '.join(others)}); "
                f"unregister it before registering {path}"
            )
        return _one_per_hardware(existing)
    try:
        ort.register_execution_provider_library(name, path)
    except Exception as e:
        raise RuntimeError(
            f"actx EP: onnxruntime {getattr(ort, '__version__', '?')} could not register {path} "
            f"as {name!r}: {e}"
        ) from e
    global _registered_name
    _registered_name = name
    return get_ep_devices(ort)


def unregister(ort: Any = None, name: Optional[str] = None) -> None:
    """Unregisters the library (``name``: the registration name; default the one
    :func:`register` used, else ``"actx"``).

    ORT requires that every session using the EP has been released first: drop them (``del``)
    before calling this.
    """
    global _registered_name
    ort = _onnxruntime(ort)
    if name is None:
        name = _registered_name or EP_NAME
    ort.unregister_execution_provider_library(name)
    if name == _registered_name:
        _registered_name = None


def info() -> Dict[str, Optional[str]]:
    """What the bundled library computes with, read from it without ORT: ``version``, ``isa``
    (the instruction set its kernels run on: "avx512", "avx2" or "portable"), ``nan_rule``
    (which ORT kernels' bits it reproduces, "avx512" or "avx2": the host's, unless
    ACTX_ORT_RULE says otherwise) and
    ``library`` (its path)."""
    path = get_library_path()
    lib = ctypes.CDLL(path)
    lib.actx_ep_info.restype = ctypes.c_char_p
    lib.actx_ep_info.argtypes = []
    text = lib.actx_ep_info().decode("utf-8")
    facts = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {
        "version": facts.get("version"),
        "isa": facts.get("isa"),
        "nan_rule": facts.get("nan_rule"),
        "library": path,
    }
