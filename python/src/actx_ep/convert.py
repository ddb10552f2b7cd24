"""Float32 (and float16) ONNX models to bfloat16 ones, and back (the reference for accuracy).

    python -m actx_ep.convert --bfloat16 IN.onnx OUT.onnx     # float32 -> bfloat16 twin
    python -m actx_ep.convert --float32 IN.onnx OUT.onnx      # bfloat16 -> float32 twin

or, in Python, :func:`to_bfloat16` and :func:`to_float32` on an ``onnx.ModelProto``.

What the bfloat16 twin holds:

* **Compute in bfloat16**: every node on the data path (the values that depend on the graph
  inputs' contents) whose ONNX schema, at the twin's opset, lets its float tensors be bfloat16.
  Its float32 initializers and Constant values are rounded to bfloat16 (to nearest, ties to even,
  NaN kept quiet: the bits of src/half.h's actx_f32_to_bf16; finite values beyond bfloat16's
  range saturate, see :func:`f32_to_bf16_bits`).
* **Shape and index arithmetic left alone**: values computed from Shape / Size only (anchor grids,
  Resize scales, ConstantOfShape fills), and every slot whose schema wants float32 (Resize's roi
  and scales), stay float32. A data-path op whose schema has no bfloat16 (Range, say) or that the
  caller names in ``float32_ops`` runs in float32 between Casts.
* **Only what runs in bfloat16**: by default an op type is computed in bfloat16 only where ORT
  with actx's EP runs it so (:func:`actx_bf16_ops`: the EP's bfloat16 service and activations,
  and the ops ORT itself runs on bfloat16 by moving bytes); any other (Hardmax,
  LpNormalization...) runs in float32 between Casts, on ORT's CPU EP, so every twin loads.
  ``only_actx_ops=False`` (``--every-op``) computes every op whose schema allows it in bfloat16.
* **Graph inputs and outputs float32** by default, with Casts at the edges
  (``keep_io_types=False`` makes the data inputs and outputs bfloat16 instead).
* **BatchNormalization folded into the Conv before it**, in float32, as ORT's level-1
  optimiser folds it for a float32 model (``fold_batch_norm=False`` keeps it a node).
* **A float16 model** is widened to float32 exactly (weights, Constants, Cast targets, types),
  then converted as a float32 one, so each weight rounds once; its float16 graph inputs and
  outputs stay float16 (Casts at the edges) unless ``keep_io_types=False``.
* **The opset raised where an op's bfloat16 schema is newer** than the model's (Conv, pooling,
  HardSigmoid / HardSwish: 22; Where, LeakyRelu, LessOrEqual: 16) by onnx.version_converter,
  which also rewrites the ops whose form changed on the way (Split, Reduce*, Pad, Resize...).

The float32 twin of a bfloat16 model (:func:`to_float32`) widens every bfloat16 tensor and type
exactly: the same graph and the same (rounded) weights, computed in float32.

Only onnx and numpy are needed (``pip install 'actx-ep[convert]'``), and only here: importing
actx_ep does not import them.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

#: Bumped whenever a conversion's output changes: caches of converted models key on it.
CONVERTER_VERSION = "3"

#: The model metadata key the converter records itself under (version and options).
METADATA_KEY = "actx_ep.convert"

#: The newest ai.onnx opset the converter raises a model to, and where its search for an op's
#: bfloat16 schema stops: every bfloat16 schema the service's ops need is 22 or older (Conv and
#: the pools: 22), and ORT 1.30 loads opset-23 models.
MAX_OPSET = 23

#: Models above this many bytes are written with their tensors in a side file (protobuf's 2 GiB).
_EXTERNAL_DATA_BYTES = 1_800_000_000

# ORT's own operators (onnx.defs does not know them) the converter can place: for each, the
# output slots that stay float32 whatever the inputs are (statistics); every other float slot
# follows the data. SimplifiedLayerNormalization is ORT's, registered in the ai.onnx domain.
_ORT_OPS: Dict[Tuple[str, str], Tuple[int, ...]] = {
    ("com.microsoft", "Gelu"): (),
    ("com.microsoft", "FastGelu"): (),
    ("com.microsoft", "BiasGelu"): (),
    ("com.microsoft", "QuickGelu"): (),
    ("com.microsoft", "FusedMatMul"): (),
    ("com.microsoft", "SkipLayerNormalization"): (1, 2),
    ("com.microsoft", "SkipSimplifiedLayerNormalization"): (1, 2),
    ("", "SimplifiedLayerNormalization"): (1,),
}

#: Ops ORT's CPU EP (1.30) runs on bfloat16 by moving bytes only, no arithmetic (measured, a
#: one-node model each): a twin keeps them bfloat16.
ORT_BF16_MOVERS = frozenset({
    "Identity", "Transpose", "Cast", "CastLike", "Reshape", "Concat", "Slice", "Gather",
    "GatherND", "GatherElements", "Split", "Unsqueeze", "Squeeze", "Shape", "Flatten", "Constant",
    "Sign", "IsNaN", "IsInf",
})
#: ...and the one bfloat16 op it computes (the EP serves it too).
ORT_BF16_OPS = ORT_BF16_MOVERS | {"LayerNormalization"}

#: The ONNX ops of the EP's exact-activation service (src/ops.h), which run in bfloat16 too.
ACTIVATION_OPS = frozenset({"Erf", "Tanh", "Sigmoid", "Gelu", "FastGelu", "BiasGelu", "QuickGelu"})


def actx_bf16_ops() -> Set[str]:
    """The op types ORT with actx's EP runs in bfloat16: the EP's bfloat16 service (its op list,
    src/bf16/bf16_ops.h, generated into the package), its activations, and ORT_BF16_OPS."""
    try:
        from . import _bf16_ops
    except ImportError as e:  # a source checkout: the list is made when the package is built
        raise ImportError("actx_ep._bf16_ops is made by building the package (pip install "
                          "./python); or convert with only_actx_ops=False") from e
    return set(_bf16_ops.SERVICE_OPS) | set(ACTIVATION_OPS) | set(ORT_BF16_OPS)


# Ops whose outputs hold facts about their input's shape, not its values: where the data path
# stops and shape arithmetic starts.
_SHAPE_OPS = {"Shape", "Size"}

# Attribute types that hold subgraphs (AttributeProto.GRAPH, GRAPHS).
_GRAPH_ATTRS = (5, 10)

_BF16 = "tensor(bfloat16)"


class ConversionError(ValueError):
    """A model the converter cannot convert, with the reason (names the node or tensor)."""


def _deps() -> Tuple[Any, Any]:
    try:
        import numpy
        import onnx
    except ImportError as e:
        raise ImportError(
            "actx_ep.convert needs onnx and numpy: pip install 'actx-ep[convert]' "
            f"(missing: {e.name})"
        ) from e
    return onnx, numpy


# ---- bfloat16 bits -----------------------------------------------------------------------------


def f32_to_bf16_bits(values: Any, saturate: bool = False) -> Any:
    """float32 values -> their bfloat16 bits (uint16): round to nearest, ties to even; a NaN keeps
    its sign and top payload bits and is made quiet. Integer arithmetic, so that the bits are
    src/half.h's actx_f32_to_bf16 on every host.

    ``saturate``: a finite value beyond bfloat16's largest (|x| >= 0xFF7FFF80 rounds up to
    infinity) becomes the largest finite bfloat16 of its sign instead. The converter rounds
    constants so: exports write "minus infinity" as float32's lowest (attention masks:
    (1 - mask) * -3.4028235e38), and as bfloat16 infinity that makes 0 * -inf = NaN."""
    _, np = _deps()
    u = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    magnitude = u & np.uint32(0x7FFFFFFF)
    nan = magnitude > np.uint32(0x7F800000)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet = (u | np.uint32(0x00400000)) >> np.uint32(16)
    bits = np.where(nan, quiet, rounded)
    if saturate:
        overflow = (magnitude < np.uint32(0x7F800000)) & ((bits & np.uint32(0x7FFF)) == 0x7F80)
        bits = np.where(overflow, (bits & np.uint32(0x8000)) | np.uint32(0x7F7F), bits)
    return bits.astype(np.uint16)


def bf16_bits_to_f32(bits: Any) -> Any:
    """bfloat16 bits (uint16) -> float32, exactly."""
    _, np = _deps()
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _tensor_to_bf16(t: Any, name: Optional[str] = None) -> Any:
    onnx, np = _deps()
    from onnx import numpy_helper

    values = numpy_helper.to_array(t).astype(np.float32, copy=False)
    out = onnx.TensorProto()
    out.name = t.name if name is None else name
    out.data_type = onnx.TensorProto.BFLOAT16
    out.dims.extend(t.dims)
    out.raw_data = f32_to_bf16_bits(values, saturate=True).astype("<u2").tobytes()
    return out


def _tensor_to_f32(t: Any) -> Any:
    """A bfloat16 or float16 tensor widened to float32 (exactly)."""
    onnx, np = _deps()
    from onnx import numpy_helper

    if t.data_type == onnx.TensorProto.FLOAT16:
        values = numpy_helper.to_array(t).astype(np.float32)
    else:
        if t.raw_data:
            bits = np.frombuffer(t.raw_data, dtype="<u2")
        else:  # int32_data holds one bfloat16 a value, in its low 16 bits
            bits = np.asarray(t.int32_data, dtype=np.uint32).astype(np.uint16)
        values = bf16_bits_to_f32(bits)
    out = onnx.TensorProto()
    out.name = t.name
    out.data_type = onnx.TensorProto.FLOAT
    out.dims.extend(t.dims)
    out.raw_data = values.astype("<f4").tobytes()
    return out


# ---- reading a model ---------------------------------------------------------------------------


def _load(model: Any) -> Any:
    """A ModelProto from a ModelProto, a path or bytes; a clear error for anything else."""
    onnx, _ = _deps()
    if isinstance(model, onnx.ModelProto):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        return m
    if isinstance(model, (bytes, bytearray)):
        try:
            return onnx.load_model_from_string(bytes(model))
        except Exception as e:
            raise ConversionError(f"the bytes given are not an ONNX model: {e}") from e
    if isinstance(model, (str, os.PathLike)):
        try:
            return onnx.load(os.fspath(model))
        except FileNotFoundError:
            raise
        except Exception as e:
            raise ConversionError(f"{os.fspath(model)} is not an ONNX model: {e}") from e
    raise ConversionError(
        f"expected an onnx.ModelProto, a path or bytes, not {type(model).__name__}"
    )


def _subgraphs(node: Any) -> List[Any]:
    out: List[Any] = []
    for a in node.attribute:
        if a.type == 5:
            out.append(a.g)
        elif a.type == 10:
            out.extend(a.graphs)
    return out


def _outer_refs(graph: Any) -> Set[str]:
    """The names a subgraph (and the subgraphs inside it) reads from enclosing scopes."""
    defined = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    defined |= {o for n in graph.node for o in n.output}
    refs: Set[str] = set()
    for n in graph.node:
        refs.update(i for i in n.input if i and i not in defined)
        for sub in _subgraphs(n):
            refs.update(r for r in _outer_refs(sub) if r not in defined)
    return refs


def _reads(node: Any) -> Set[str]:
    """The values a node reads: its inputs and what its subgraphs read from enclosing scopes."""
    reads = {i for i in node.input if i}
    for sub in _subgraphs(node):
        reads |= _outer_refs(sub)
    return reads


def _rename_refs(graph: Any, mapping: Dict[str, str]) -> None:
    """Renames the outer values a subgraph reads (not its own: ONNX names are unique)."""
    defined = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    defined |= {o for n in graph.node for o in n.output}
    inner = {k: v for k, v in mapping.items() if k not in defined}
    for n in graph.node:
        for i, name in enumerate(n.input):
            if name in inner:
                n.input[i] = inner[name]
        for sub in _subgraphs(n):
            _rename_refs(sub, inner)


def _sort(graph: Any) -> None:
    """Nodes in topological order (ORT accepts any order; the checker and this converter do not),
    the model's own order kept where it is one. A value no node makes is a clear error."""
    import heapq

    nodes = list(graph.node)
    made = {o: k for k, n in enumerate(nodes) for o in n.output if o}
    needs: List[Set[int]] = []
    for k, n in enumerate(nodes):
        needs.append({made[r] for r in _reads(n) if r in made and made[r] != k})
    waiting = [len(x) for x in needs]
    users: Dict[int, List[int]] = {}
    for k, x in enumerate(needs):
        for d in x:
            users.setdefault(d, []).append(k)
    ready = [k for k, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order: List[int] = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users.get(k, []):
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    if len(order) != len(nodes):
        stuck = next(nodes[k] for k in range(len(nodes)) if waiting[k] > 0)
        raise ConversionError(f"the graph has a cycle through {_node_label(stuck)}")
    if order != list(range(len(nodes))):
        del graph.node[:]
        graph.node.extend(nodes[k] for k in order)


def _check(model: Any, what: str) -> None:
    onnx, _ = _deps()
    if not model.HasField("graph") or len(model.graph.node) == 0:
        raise ConversionError(f"{what} is not an ONNX model with a graph (no nodes)")
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise ConversionError(f"{what} is not a valid ONNX model: {e}") from e


def _ai_onnx_opset(model: Any) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    raise ConversionError("the model imports no ai.onnx opset")


def _node_label(node: Any) -> str:
    return f"{node.op_type} node '{node.name}'" if node.name else f"{node.op_type} node"


def _elem_types(model: Any) -> Dict[str, int]:
    """Every value's element type, after ONNX type inference (strict: an ill-typed graph is a
    clear error here, not a wrong conversion)."""
    onnx, _ = _deps()
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as e:
        raise ConversionError(f"ONNX type inference fails on the model: {e}") from e
    g = inferred.graph
    types: Dict[str, int] = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
            types[v.name] = v.type.tensor_type.elem_type
    for t in g.initializer:
        types[t.name] = t.data_type
    return types


def _drop_stale_shapes(model: Any) -> None:
    """An exporter's stale shapes, which ORT runs past and onnx's strict inference does not: the
    graph's value_info (hints) are dropped, and each output's declared shape becomes the one
    inference finds for it (its element type kept)."""
    onnx, _ = _deps()
    g = model.graph
    del g.value_info[:]
    relaxed = onnx.ModelProto()
    relaxed.CopyFrom(model)
    for out in relaxed.graph.output:
        out.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(relaxed, strict_mode=True, data_prop=True)
    except Exception:
        return  # the model's own error, which _elem_types reports
    found = {v.name: v for v in inferred.graph.output}
    for out in g.output:
        v = found.get(out.name)
        if v is not None and v.type.tensor_type.HasField("shape"):
            out.type.tensor_type.shape.CopyFrom(v.type.tensor_type.shape)


def _all_tensor_types(model: Any) -> Iterable[int]:
    g = model.graph
    for t in g.initializer:
        yield t.data_type
    for v in list(g.input) + list(g.value_info) + list(g.output):
        if v.type.HasField("tensor_type"):
            yield v.type.tensor_type.elem_type
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t.data_type
            if n.op_type == "Cast" and a.name == "to":
                yield a.i


# ---- schemas -----------------------------------------------------------------------------------


class _Slots:
    """For one node at the target opset: the type constraint of each input and output slot, and
    which constraints (or fixed types) allow bfloat16."""

    def __init__(self, node: Any, opset: int, float32_ops: Set[str]):
        onnx, _ = _deps()
        self.node = node
        self.inputs: List[Optional[str]] = []
        self.outputs: List[Optional[str]] = []
        self.allows_bf16: Dict[str, bool] = {}
        key = (node.domain if node.domain != "ai.onnx" else "", node.op_type)
        # Control flow stays float32, its bodies untouched: they read outer values by name, and
        # those it reads get float32 copies (the bodies' types are the float32 model's).
        if node.op_type in float32_ops or _subgraphs(node):
            self.known = True
            self.fixed_f32 = True
            return
        self.fixed_f32 = False
        if key in _ORT_OPS:
            # Every float slot follows the data ("T"), except the statistics outputs ("U").
            self.known = True
            stats = _ORT_OPS[key]
            self.inputs = ["T"] * len(node.input)
            self.outputs = ["U" if j in stats else "T" for j in range(len(node.output))]
            self.allows_bf16 = {"T": True, "U": False}
            return
        domain = key[0]
        try:
            schema = onnx.defs.get_schema(node.op_type, opset, domain)
        except Exception:
            self.known = False
            return
        self.known = True
        constraints = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}

        variadic = onnx.defs.OpSchema.FormalParameterOption.Variadic

        def formal(params: Any, count: int) -> List[Optional[str]]:
            out: List[Optional[str]] = []
            for i in range(count):
                if i < len(params):
                    out.append(params[i].type_str)
                elif params and params[-1].option == variadic:
                    out.append(params[-1].type_str)
                else:
                    out.append(None)
            return out

        self.inputs = formal(schema.inputs, len(node.input))
        self.outputs = formal(schema.outputs, len(node.output))
        for ts in set(self.inputs + self.outputs):
            if ts is None:
                continue
            allowed = constraints.get(ts, [ts])
            self.allows_bf16[ts] = _BF16 in allowed

    def input_allows(self, i: int) -> bool:
        ts = self.inputs[i] if i < len(self.inputs) else None
        return ts is not None and self.allows_bf16.get(ts, False)

    def output_follows_inputs(self, j: int) -> bool:
        """Output j takes bfloat16 when the node's data inputs do: its constraint allows it and is
        shared with an input slot."""
        ts = self.outputs[j] if j < len(self.outputs) else None
        return ts is not None and self.allows_bf16.get(ts, False) and ts in self.inputs


def _bf16_since(op_type: str, domain: str, opset: int) -> Optional[int]:
    """The first opset >= the model's whose schema of this op allows bfloat16 data; None if none up
    to MAX_OPSET does (the op then stays float32)."""
    onnx, _ = _deps()
    if domain not in ("", "ai.onnx") or (domain, op_type) in _ORT_OPS:
        return opset
    for v in range(opset, MAX_OPSET + 1):
        try:
            schema = onnx.defs.get_schema(op_type, v, "")
        except Exception:
            return None
        constraints = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}
        # The data's constraint: the first input's that holds float32 (Resize's X, not its roi;
        # Where's X, not its condition).
        floaty = [
            constraints.get(p.type_str, [p.type_str])
            for p in schema.inputs
            if "tensor(float)" in constraints.get(p.type_str, [p.type_str])
        ]
        if not floaty:
            return opset
        if _BF16 in floaty[0]:
            return v
    return None


def bf16_opsets(model: Any) -> Dict[str, Optional[int]]:
    """For each ai.onnx op type of a float32 model: the opset its bfloat16 form needs (the model's
    own where that already has it; None where no opset up to MAX_OPSET has one)."""
    m = _load(model)
    opset = _ai_onnx_opset(m)
    return {
        n.op_type: _bf16_since(n.op_type, n.domain, opset)
        for n in m.graph.node
        if n.domain in ("", "ai.onnx") and n.op_type not in ("Constant",)
    }


# ---- float32 -> bfloat16 -----------------------------------------------------------------------


def _fold_batch_norms(g: Any) -> int:
    """ORT's level-1 ConvBNFusion on the float32 graph, before anything is rounded: a
    BatchNormalization (inference: one output) whose input only a Conv makes, that Conv's
    result read by nothing else, the Conv's weights (and bias) and the statistics constants
    (initializers, or Constant nodes as older exporters write them), becomes the Conv with weights W · s and bias (B - mean) · s + b, s =
    scale / sqrt(var + epsilon), computed in float32 as ORT computes them. A twin then rounds
    the folded weights once, and runs one node where it would run two (ORT alone folds the
    float32 model the same way). Returns how many were folded."""
    onnx, np = _deps()
    from onnx import numpy_helper

    inits = {t.name: t for t in g.initializer}  # the constants: initializers, Constants' values
    for n in g.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.attribute) == 1 \
                and n.attribute[0].name == "value" and n.output[0] not in inits:
            inits[n.output[0]] = n.attribute[0].t
    readers: Dict[str, int] = {}
    for n in g.node:
        for name in _reads(n):
            readers[name] = readers.get(name, 0) + 1
    outputs = {v.name for v in g.output}
    maker = {o: n for n in g.node for o in n.output}
    folded, drop, stale = 0, [], set()
    for bn in g.node:
        if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx"):
            continue
        if len([o for o in bn.output if o]) != 1 or len(bn.input) != 5:
            continue
        attrs = {a.name: a for a in bn.attribute}
        if "training_mode" in attrs and attrs["training_mode"].i != 0:
            continue
        conv = maker.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx"):
            continue
        if readers.get(bn.input[0], 0) != 1 or bn.input[0] in outputs:
            continue
        names = list(bn.input[1:]) + list(conv.input[1:])
        if not all(name in inits and inits[name].data_type == onnx.TensorProto.FLOAT
                   for name in names if name) or len(conv.input) < 2 or not conv.input[1]:
            continue
        if any(readers.get(name, 0) != 1 or name in outputs for name in conv.input[1:] if name):
            continue  # a weight shared with another node, or a graph output, stays as it is
        scale, bias, mean, var = (numpy_helper.to_array(inits[n]).astype(np.float32)
                                  for n in bn.input[1:])
        w = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float32)
        m = w.shape[0]
        if any(v.shape != (m,) for v in (scale, bias, mean, var)):
            continue
        eps = np.float32(attrs["epsilon"].f if "epsilon" in attrs else 1e-5)
        s = scale / np.sqrt(var + eps)
        b0 = (numpy_helper.to_array(inits[conv.input[2]]).astype(np.float32)
              if len(conv.input) > 2 and conv.input[2] else np.zeros(m, np.float32))
        w_new = (w * s.reshape((m,) + (1,) * (w.ndim - 1))).astype(np.float32)
        b_new = ((b0 - mean) * s + bias).astype(np.float32)
        w_t = inits[conv.input[1]]
        w_t.CopyFrom(numpy_helper.from_array(w_new, w_t.name))
        if len(conv.input) > 2 and conv.input[2]:
            b_t = inits[conv.input[2]]
            b_t.CopyFrom(numpy_helper.from_array(b_new, b_t.name))
        else:
            taken = set(inits) | {o for n in g.node for o in n.output} | \
                {v.name for v in list(g.input) + list(g.output)}
            name, k = f"{conv.input[1]}/folded_bias", 1
            while name in taken:
                k += 1
                name = f"{conv.input[1]}/folded_bias_{k}"
            g.initializer.append(numpy_helper.from_array(b_new, name))
            inits[name] = g.initializer[-1]
            del conv.input[2:]
            conv.input.append(name)
        conv.output[0] = bn.output[0]
        drop.append(bn)
        stale |= {name for name in bn.input[1:] if readers.get(name, 0) == 1
                  and name not in outputs}
        folded += 1
    for bn in drop:
        g.node.remove(bn)
    for t in list(g.initializer):  # statistics nothing else reads
        if t.name in stale:
            g.initializer.remove(t)
    for n in list(g.node):
        if n.op_type == "Constant" and n.output[0] in stale:
            g.node.remove(n)
    for v in list(g.input):  # an old model lists its initializers as inputs too
        if v.name in stale:
            g.input.remove(v)
    if folded:
        kept = {o for n in g.node for o in n.output} | {v.name for v in g.input} | set(inits)
        for v in list(g.value_info):
            if v.name not in kept:
                g.value_info.remove(v)
    return folded


def _raise_opset(model: Any, float32_ops: Set[str], opset: Optional[int]) -> Tuple[Any, int, int]:
    onnx, _ = _deps()
    from onnx import version_converter

    before = _ai_onnx_opset(model)
    target = before
    if opset is not None:
        if opset < before:
            raise ConversionError(f"opset {opset} is older than the model's ({before})")
        target = opset
    for n in model.graph.node:
        if n.op_type in float32_ops or _subgraphs(n):
            continue
        since = _bf16_since(n.op_type, n.domain, before)
        if since is not None:
            target = max(target, since)
    if target > MAX_OPSET:
        raise ConversionError(f"opset {target} is newer than the converter raises to ({MAX_OPSET})")
    if target == before:
        return model, before, target
    try:
        raised = version_converter.convert_version(model, target)
    except Exception as e:
        raise ConversionError(
            f"onnx.version_converter could not raise the model from opset {before} to {target} "
            f"(needed for bfloat16 schemas): {e}"
        ) from e
    return raised, before, target


def to_bfloat16(
    model: Any,
    keep_io_types: bool = True,
    float32_ops: Iterable[str] = (),
    opset: Optional[int] = None,
    only_actx_ops: bool = True,
    fold_batch_norm: bool = True,
) -> Any:
    """The bfloat16 twin of a float32 or float16 model (an ``onnx.ModelProto``, a path or bytes).

    ``keep_io_types``: graph inputs and outputs stay float32, with Casts at the edges (default);
    False makes the data-path ones bfloat16. ``float32_ops``: op types kept in float32 between
    Casts (also the way to convert a model with an op the converter does not know). ``opset``: an
    ai.onnx opset to raise to at least. ``only_actx_ops``: op types outside
    :func:`actx_bf16_ops` are kept in float32 too (default), so that the twin loads in ORT with
    actx's EP; False computes every op whose schema allows it in bfloat16.
    ``fold_batch_norm``: a BatchNormalization after a Conv is folded into its weights and bias
    in float32 first, as ORT's level-1 optimiser does to a float32 model (default); False keeps
    it a node of its own. Raises :class:`ConversionError` naming what it cannot convert.
    """
    onnx, _ = _deps()
    from onnx import helper

    m = _load(model)
    if m.HasField("graph"):
        _sort(m.graph)
    _check(m, "the input")
    f32_ops = set(float32_ops)
    if only_actx_ops:
        # every op the EP and ORT cannot run in bfloat16, but those that never hold float data
        # of their own (shape ops, Constant) and control flow (kept float32 anyway)
        runs = actx_bf16_ops()
        f32_ops |= {n.op_type for n in m.graph.node if n.op_type not in runs
                    and n.op_type not in _SHAPE_OPS and not _subgraphs(n)}
    FLOAT, BF16 = onnx.TensorProto.FLOAT, onnx.TensorProto.BFLOAT16
    FLOAT16 = onnx.TensorProto.FLOAT16
    if any(t == BF16 for t in _all_tensor_types(m)):
        raise ConversionError(
            "the model already holds bfloat16 tensors: convert float32 models only "
            "(to_float32 makes a bfloat16 model's float32 twin)"
        )
    # A float16 model is widened to float32 exactly and converted as one (float16 -> bfloat16
    # through float32 rounds once); its float16 graph inputs and outputs stay float16.
    from_half = any(t == FLOAT16 for t in _all_tensor_types(m))
    half_names = {v.name for v in list(m.graph.input) + list(m.graph.output)
                  if v.type.tensor_type.elem_type == FLOAT16}
    if from_half:
        _widen(m.graph, FLOAT16)
    folded = _fold_batch_norms(m.graph) if fold_batch_norm else 0
    opset_before = _ai_onnx_opset(m)
    for n in m.graph.node:
        if n.op_type in f32_ops:
            continue
        if not _Slots(n, opset_before, f32_ops).known:
            domain = n.domain or "ai.onnx"
            raise ConversionError(
                f"{_node_label(n)}: op {n.op_type} of domain {domain} is unknown to the converter "
                f"(not in onnx {onnx.__version__}'s schemas); keep it in float32 with "
                f"float32_ops=['{n.op_type}'] (--float32-ops {n.op_type})"
            )

    m, opset_before, opset_after = _raise_opset(m, f32_ops, opset)
    g = m.graph
    try:
        types = _elem_types(m)
    except ConversionError:
        _drop_stale_shapes(m)
        types = _elem_types(m)
    nodes = list(g.node)
    slots = [_Slots(n, opset_after, f32_ops) for n in nodes]
    refs = [set().union(*[_outer_refs(sub) for sub in _subgraphs(n)]) for n in nodes]

    # Where each value comes from: the graph's data (D), its shapes (S), or constants (neither).
    initializers = {t.name: t for t in g.initializer}
    graph_inputs = [v.name for v in g.input if v.name not in initializers]

    def is_float(name: str) -> bool:
        return bool(name) and types.get(name) == FLOAT

    # Shape values: what Shape / Size make and what is computed from it. Float values only moved
    # by shape-made indices (an embedding table's Gather by position) stay constants.
    data: Set[str] = set(graph_inputs)
    shape: Set[str] = set()
    for k, n in enumerate(nodes):
        ins = [i for i in n.input if i] + sorted(refs[k])
        float_ins = [i for i in ins if is_float(i)]
        if n.op_type in _SHAPE_OPS:
            shape.update(n.output)
        elif any(i in data for i in ins):
            data.update(n.output)
        elif any(i in shape for i in (float_ins or ins)):
            shape.update(n.output)

    # Which nodes compute in bfloat16: those on the data path, and constant-only ones (a weight's
    # Transpose) unless what they make feeds a float32 slot; never shape arithmetic or an op whose
    # schema has no bfloat16 for its float inputs.
    def eligible(k: int) -> bool:
        n, s = nodes[k], slots[k]
        if s.fixed_f32 or n.op_type in _SHAPE_OPS or n.op_type == "Constant":
            return False
        float_ins = [i for i, name in enumerate(n.input) if is_float(name)]
        float_outs = [j for j, name in enumerate(n.output) if is_float(name)]
        if n.op_type == "Cast":
            return True
        if not float_ins and not float_outs:
            return False
        if not any(s.input_allows(i) for i in float_ins):
            return False
        return all(s.output_follows_inputs(j) or j in _stat_outputs(s, j) for j in float_outs)

    def _stat_outputs(s: _Slots, j: int) -> Tuple[int, ...]:
        ts = s.outputs[j] if j < len(s.outputs) else None
        # An output whose constraint does not allow bfloat16 stays float32 (LayerNormalization's
        # Mean when U is float only; ORT's statistics outputs).
        return (j,) if ts is not None and not s.allows_bf16.get(ts, False) else ()

    consumers: Dict[str, List[Tuple[int, int]]] = {}
    for k, n in enumerate(nodes):
        for i, name in enumerate(n.input):
            if name:
                consumers.setdefault(name, []).append((k, i))
        for name in refs[k]:  # a subgraph's read: a float32 slot of its (float32) node
            consumers.setdefault(name, []).append((k, -1))

    bf16_node = [False] * len(nodes)
    for k, n in enumerate(nodes):
        if not eligible(k):
            continue
        ins = [i for i in n.input if i]
        if n.op_type == "Cast":
            # A Cast to float32 of data becomes one to bfloat16; one of shape values stays.
            bf16_node[k] = any(i in data for i in ins) and (
                is_float(n.output[0]) or is_float(n.input[0])
            )
        elif any(i in data for i in ins):
            bf16_node[k] = True
        elif not any(i in shape for i in ins if is_float(i)):
            # Float constants only (an embedding table's Gather by positions made from a shape
            # included): decided again below, from its consumers.
            bf16_node[k] = True

    # The dtype each value ends with, and the dtype each consumer slot wants (None: either, as
    # Shape reads only the shape).
    def wants(k: int, i: int) -> Optional[int]:
        if nodes[k].op_type in _SHAPE_OPS:
            return None
        if not bf16_node[k]:
            return FLOAT
        n, s = nodes[k], slots[k]
        if n.op_type == "Cast":
            return BF16
        return BF16 if s.input_allows(i) else FLOAT

    # Constant-only nodes feeding float32 slots go back to float32, last to first.
    for k in reversed(range(len(nodes))):
        n = nodes[k]
        if not bf16_node[k] or any(i in data for i in n.input if i):
            continue
        for o in n.output:
            if is_float(o) and any(wants(c, i) == FLOAT for c, i in consumers.get(o, [])):
                bf16_node[k] = False
                break

    final: Dict[str, int] = {}
    for k, n in enumerate(nodes):
        if not bf16_node[k]:
            continue
        if n.op_type == "Cast":
            to = next(a for a in n.attribute if a.name == "to")
            if to.i == FLOAT:
                final[n.output[0]] = BF16
            continue
        for j, o in enumerate(n.output):
            if is_float(o) and slots[k].output_follows_inputs(j):
                final[o] = BF16

    # New names (Casts, copies) never collide with the model's.
    taken = {n.name for n in nodes} | {x for n in nodes for x in n.output} | set(initializers)
    taken |= {v.name for v in g.input}

    def fresh(base: str) -> str:
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    graph_outputs = {v.name for v in g.output}
    # Initializers and Constant values: bfloat16 where every consumer wants it; a float32 copy is
    # kept beside when some consumer (a float32 slot) wants the original.
    constant_nodes = {n.output[0]: k for k, n in enumerate(nodes) if n.op_type == "Constant"}
    extra_initializers = []
    renamed: Dict[Tuple[str, int], str] = {}  # (tensor, dtype) -> the name holding it in dtype
    for name in list(initializers) + list(constant_nodes):
        if not is_float(name):
            continue
        want = {wants(c, i) for c, i in consumers.get(name, [])} - {None}
        if name in graph_outputs:
            want.add(FLOAT if keep_io_types else BF16)
        if BF16 not in want:
            continue
        if want == {BF16}:
            final[name] = BF16
            continue
        copy = fresh(f"{name}/bf16")
        renamed[(name, BF16)] = copy
        if name in initializers:
            extra_initializers.append(_tensor_to_bf16(initializers[name], copy))
        else:
            value = _constant_tensor(nodes[constant_nodes[name]])
            extra_initializers.append(_tensor_to_bf16(value, copy))

    for t in g.initializer:
        if final.get(t.name) == BF16:
            t.CopyFrom(_tensor_to_bf16(t))
    g.initializer.extend(extra_initializers)
    for name, k in constant_nodes.items():
        if final.get(name) == BF16:
            c = nodes[k]
            tensor = _tensor_to_bf16(_constant_tensor(c), "")
            del c.attribute[:]
            c.attribute.append(helper.make_attribute("value", tensor))

    # Graph inputs: float32 with a Cast inside (keep_io_types), or bfloat16 themselves.
    input_casts = []
    for v in g.input:
        if v.name in initializers or not is_float(v.name):
            continue
        want = {wants(c, i) for c, i in consumers.get(v.name, [])} - {None}
        if BF16 not in want:
            continue
        if keep_io_types:
            inner = renamed[(v.name, BF16)] = fresh(f"{v.name}/bf16")
            input_casts.append(helper.make_node(
                "Cast", [v.name], [inner], name=fresh(f"{v.name}/to_bf16"), to=BF16))
        else:
            v.type.tensor_type.elem_type = BF16
            final[v.name] = BF16

    # Every node's inputs in the dtype it wants: a Cast (one per value and dtype) where not.
    casts_made: Set[Tuple[str, int]] = set((name, d) for (name, d) in renamed)
    new_nodes = list(input_casts)
    for k, n in enumerate(nodes):
        if bf16_node[k] and n.op_type == "Cast":
            to = next(a for a in n.attribute if a.name == "to")
            if to.i == FLOAT:
                to.i = BF16
        for i, name in enumerate(n.input):
            if not is_float(name):
                continue
            want = wants(k, i)
            have = final.get(name, FLOAT)
            if want is None or (n.op_type == "Cast" and bf16_node[k]):
                want = have  # either will do
            if want == have:
                continue
            key = (name, want)
            if key not in casts_made:
                casts_made.add(key)
                suffix = "bf16" if want == BF16 else "f32"
                renamed[key] = fresh(f"{name}/{suffix}")
                new_nodes.append(helper.make_node(
                    "Cast", [name], [renamed[key]], name=fresh(f"{name}/to_{suffix}"), to=want))
            n.input[i] = renamed[key]
        outer = {}
        for name in sorted(refs[k]):
            if is_float(name) and final.get(name, FLOAT) == BF16:
                key = (name, FLOAT)
                if key not in casts_made:
                    casts_made.add(key)
                    renamed[key] = fresh(f"{name}/f32")
                    new_nodes.append(helper.make_node(
                        "Cast", [name], [renamed[key]], name=fresh(f"{name}/to_f32"), to=FLOAT))
                outer[name] = renamed[key]
        for sub in _subgraphs(n):
            _rename_refs(sub, outer)
        new_nodes.append(n)

    # Graph outputs: float32 through a Cast (keep_io_types), or whatever they became.
    for v in g.output:
        if final.get(v.name) != BF16:
            continue
        if not keep_io_types:
            v.type.tensor_type.elem_type = BF16
            continue
        inner = fresh(f"{v.name}/bf16")
        for n in new_nodes:
            for i, name in enumerate(n.input):
                if name == v.name:
                    n.input[i] = inner
            for j, name in enumerate(n.output):
                if name == v.name:
                    n.output[j] = inner
        for t in g.initializer:
            if t.name == v.name:
                t.name = inner
        new_nodes.append(helper.make_node(
            "Cast", [inner], [v.name], name=fresh(f"{v.name}/to_f32"), to=FLOAT))
    del g.node[:]
    g.node.extend(new_nodes)
    if keep_io_types and half_names:
        io = {v.name for v in g.input} - set(initializers)
        _half_edges(g, half_names & io, half_names & {v.name for v in g.output}, fresh)

    # Types: value_info retyped (shape inference fills what the Casts added).
    for v in g.value_info:
        if final.get(v.name) == BF16 and v.type.HasField("tensor_type"):
            v.type.tensor_type.elem_type = BF16
    for v in list(g.value_info):
        if v.name in graph_outputs and keep_io_types and final.get(v.name) == BF16:
            g.value_info.remove(v)
    _set_metadata(m, f"version={CONVERTER_VERSION};to=bfloat16;keep_io_types={int(keep_io_types)}"
                  f";float32_ops={','.join(sorted(f32_ops))};opset={opset_before}->{opset_after}"
                  + (";from=float16" if from_half else "")
                  + (f";folded_batch_norms={folded}" if folded else ""))
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        onnx.checker.check_model(m)
    except Exception as e:  # a bug here, not in the input: say so
        raise ConversionError(f"the converted model does not check (a converter bug): {e}") from e
    if not any(t == BF16 for t in _all_tensor_types(m)):
        flow = [_node_label(n) for n in nodes if _subgraphs(n)]
        where = f" (control flow, kept float32: {', '.join(flow[:3])})" if flow else ""
        raise ConversionError(
            f"nothing in the model computes in bfloat16 outside float32-only ops{where}: "
            "its twin would be the model itself")
    return m


def _constant_tensor(node: Any) -> Any:
    onnx, np = _deps()
    from onnx import numpy_helper

    for a in node.attribute:
        if a.name == "value":
            return a.t
        if a.name == "value_float":
            return numpy_helper.from_array(np.array(a.f, dtype=np.float32))
        if a.name == "value_floats":
            return numpy_helper.from_array(np.array(list(a.floats), dtype=np.float32))
    raise ConversionError(f"{_node_label(node)} holds no float value")


def _widen(g: Any, narrow: int) -> None:
    """Every tensor, type and dtype attribute of element type ``narrow`` (bfloat16 or float16) of
    a graph and its subgraphs -> float32."""
    onnx, _ = _deps()
    FLOAT = onnx.TensorProto.FLOAT
    for t in g.initializer:
        if t.data_type == narrow:
            t.CopyFrom(_tensor_to_f32(t))
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t") and a.t.data_type == narrow:
                a.t.CopyFrom(_tensor_to_f32(a.t))
            if a.name in ("to", "dtype", "output_dtype") and a.type == a.INT and a.i == narrow:
                a.i = FLOAT
        for sub in _subgraphs(n):
            _widen(sub, narrow)
    for v in list(g.input) + list(g.value_info) + list(g.output):
        if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type == narrow:
            v.type.tensor_type.elem_type = FLOAT


def _half_edges(g: Any, inputs: Set[str], outputs: Set[str], fresh: Any) -> None:
    """A float16 model's twin keeps its float16 graph inputs and outputs (keep_io_types): the
    named inputs and outputs of the converted (widened) graph become float16 again, with Casts
    inside. A Cast reads float16 as well as float32, so only other readers get a widened copy; an
    output a Cast makes only for the edge gets that Cast's target changed."""
    onnx, _ = _deps()
    from onnx import helper

    FLOAT, FLOAT16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
    for v in list(g.value_info):  # what the edges below retype, no hint contradicts
        if v.name in outputs or v.name in inputs:
            g.value_info.remove(v)
    for v in g.output:
        if v.name not in outputs:
            continue
        v.type.tensor_type.elem_type = FLOAT16
        if v.name in inputs:  # the input itself, float16 again below
            continue
        makers = [n for n in g.node if v.name in n.output]
        readers = [n for n in g.node if v.name in _reads(n)]
        if len(makers) == 1 and makers[0].op_type == "Cast" and not readers:
            next(a for a in makers[0].attribute if a.name == "to").i = FLOAT16
            continue
        inner = fresh(f"{v.name}/f32")
        for n in g.node:
            n.input[:] = [inner if x == v.name else x for x in n.input]
            n.output[:] = [inner if x == v.name else x for x in n.output]
            for sub in _subgraphs(n):
                _rename_refs(sub, {v.name: inner})
        for t in g.initializer:
            if t.name == v.name:
                t.name = inner
        g.node.append(helper.make_node(
            "Cast", [inner], [v.name], name=fresh(f"{v.name}/to_f16"), to=FLOAT16))
    front = []
    for v in g.input:
        if v.name not in inputs:
            continue
        v.type.tensor_type.elem_type = FLOAT16
        wide = None
        for n in g.node:
            if n.op_type == "Cast" or v.name not in _reads(n):
                continue
            if wide is None:
                wide = fresh(f"{v.name}/f32")
                front.append(helper.make_node(
                    "Cast", [v.name], [wide], name=fresh(f"{v.name}/to_f32"), to=FLOAT))
            n.input[:] = [wide if x == v.name else x for x in n.input]
            for sub in _subgraphs(n):
                _rename_refs(sub, {v.name: wide})
    nodes = front + list(g.node)
    del g.node[:]
    g.node.extend(nodes)


def _set_metadata(m: Any, value: str) -> None:
    for p in m.metadata_props:
        if p.key == METADATA_KEY:
            p.value = value
            return
    p = m.metadata_props.add()
    p.key, p.value = METADATA_KEY, value


# ---- bfloat16 -> float32 -----------------------------------------------------------------------


def to_float32(model: Any) -> Any:
    """The float32 twin of a bfloat16 model: every bfloat16 initializer, Constant, Cast target and
    type widened to float32 exactly; the graph and opset unchanged."""
    onnx, _ = _deps()
    m = _load(model)
    _check(m, "the input")
    BF16 = onnx.TensorProto.BFLOAT16
    if not any(t == BF16 for t in _all_tensor_types(m)):
        raise ConversionError("the model holds no bfloat16 tensor: nothing to widen")
    _widen(m.graph, BF16)
    _set_metadata(m, f"version={CONVERTER_VERSION};to=float32")
    try:
        onnx.checker.check_model(m)
    except Exception as e:
        raise ConversionError(f"the float32 twin does not check (a converter bug): {e}") from e
    return m


# ---- what a converted model holds --------------------------------------------------------------


def bf16_nodes(model: Any) -> List[Any]:
    """The nodes of a model that compute on bfloat16 (a bfloat16 input or output), Casts
    excluded: what an EP must run for the model to load on a CPU."""
    onnx, _ = _deps()
    m = _load(model)
    types = _elem_types(m)
    BF16 = onnx.TensorProto.BFLOAT16
    return [
        n for n in m.graph.node
        if n.op_type != "Cast"
        and any(types.get(x) == BF16 for x in list(n.input) + list(n.output) if x)
    ]


def save(model: Any, path: str) -> None:
    """Writes a model, its tensors in a side file when protobuf's 2 GiB would not hold them."""
    onnx, _ = _deps()
    big = model.ByteSize() > _EXTERNAL_DATA_BYTES
    onnx.save(model, path, save_as_external_data=big,
              location=os.path.basename(path) + ".data" if big else None)


# ---- the command line --------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m actx_ep.convert",
        description="Converts an ONNX model to its bfloat16 twin (float32 inputs and outputs, "
                    "bfloat16 compute) or a bfloat16 model to its float32 twin.")
    way = p.add_mutually_exclusive_group(required=True)
    way.add_argument("--bfloat16", action="store_true", help="float32 (or float16) -> bfloat16")
    way.add_argument("--float32", action="store_true", help="bfloat16 -> float32 (the reference)")
    p.add_argument("input", help="the model to convert")
    p.add_argument("output", help="where to write the converted model")
    p.add_argument("--bf16-io", action="store_true",
                   help="bfloat16 graph inputs and outputs (default: float32, Casts inside)")
    p.add_argument("--float32-ops", default="",
                   help="comma-separated op types kept in float32 between Casts")
    p.add_argument("--opset", type=int, default=None, help="raise the ai.onnx opset to at least N")
    p.add_argument("--keep-batch-norm", action="store_true",
                   help="keep a BatchNormalization after a Conv a node of its own (default: "
                        "folded into the Conv's weights in float32, as ORT does)")
    p.add_argument("--every-op", action="store_true",
                   help="compute every op whose schema allows it in bfloat16 (default: only "
                        "those ORT with actx's EP runs in bfloat16; the rest float32)")
    a = p.parse_args(argv)
    try:
        if a.bfloat16:
            ops = [o for o in a.float32_ops.split(",") if o]
            out = to_bfloat16(a.input, keep_io_types=not a.bf16_io, float32_ops=ops,
                              opset=a.opset, only_actx_ops=not a.every_op,
                              fold_batch_norm=not a.keep_batch_norm)
        else:
            out = to_float32(a.input)
        save(out, a.output)
    except (ConversionError, FileNotFoundError, ImportError) as e:
        print(f"actx_ep.convert: {e}", file=sys.stderr)
        return 1
    meta = next(p.value for p in out.metadata_props if p.key == METADATA_KEY)
    print(f"actx_ep.convert: {a.output} ({meta})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
