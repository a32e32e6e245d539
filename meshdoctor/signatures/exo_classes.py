"""exo's placement refusals, read from exo's own source: the ``ValueError`` texts that
``place_instance`` raises when no set of nodes can run a model (exo-explore/exo
src/exo/master/placement.py and its Topology class, commit b5375f8, 2026-06). The API
answers them as HTTP 400 (``{"detail": "..."}``) and the dashboard's placement previews show
them. Each is a :class:`~meshdoctor.signatures.model.FailureClass` of exo.placement (MD818).

exo's words: a *cycle* is the nodes of one instance in ring order; an instance of
MlxJaccl runs MLX's jaccl backend (RDMA over Thunderbolt), MlxRing MLX's ring backend."""

from __future__ import annotations

from meshdoctor.signatures.model import failure_class as fc

_P = "exo-explore/exo src/exo/master/placement.py (place_instance), commit b5375f8"

PLACEMENT = (
    fc(
        "exo.no-rdma-cycle",
        r"Requested RDMA \(MlxJaccl\) but no RDMA-connected cycles available",
        "exo found no set of nodes for a jaccl (RDMA) instance: among the smallest sets of "
        "nodes with room for the model, none has an RDMA link between every two of its nodes "
        "that reach each other, with RDMA enabled on each node",
        "two nodes of the set without a direct Thunderbolt 5 cable (jaccl needs every pair "
        "cabled: four Macs cabled as a ring are not a full mesh), a node whose RDMA is not "
        "enabled (`rdma_ctl enable` in macOS recovery), or a node that left the cluster but "
        "stays in exo's state (its identity kept after it went away, or a new identity minted "
        "by each restart: exo issue #2194, fixed by PRs #2211 and #2250)",
        "cable every pair of the instance's nodes with Thunderbolt 5 and run `rdma_ctl "
        "status` on each (enabled); compare the nodes exo lists (its /state, node identities) "
        "with the live ones: more than are running means a departed node is kept, so upgrade "
        "exo, or stop every node and start them all again; meanwhile use MlxRing (TCP)",
        _P + "; its Topology.is_rdma_cycle",
    ),
    fc(
        "exo.no-memory-cycle",
        r"No cycles found with sufficient memory",
        "exo found no set of connected nodes whose available memory holds the model's weights "
        "(its storage size against each node's available memory)",
        "the model is larger than the cluster's free memory: other instances or apps hold "
        "memory, a node has not joined (discovery), or the model needs more nodes than are "
        "connected",
        "delete other instances or stop other apps on the nodes, check that every node "
        "joined (exo's topology), add nodes or pick a smaller model or quantization",
        _P,
    ),
    fc(
        "exo.tensor-unsupported",
        r"Requested Tensor sharding but this model does not support tensor parallelism",
        "the model's card does not allow tensor sharding",
        "tensor parallelism asked of a model exo shards only by pipeline",
        "use pipeline sharding for this model",
        _P,
    ),
    fc(
        "exo.tensor-no-split",
        r"No tensor sharding found for model with hidden_size=\d+(?:, num_key_value_heads=\d+)? "
        r"across candidate cycles",
        "tensor sharding needs the model's hidden size and its KV head count to divide by the "
        "number of nodes, and no set of nodes with room for it has such a count",
        "a node count that does not divide the model's hidden_size or num_key_value_heads "
        "(three nodes for a model with 8 KV heads)",
        "place it on a node count that divides both (2, 4, 8), or use pipeline sharding",
        _P,
    ),
    fc(
        "exo.pipeline-unsupported",
        r"Pipeline parallelism is not supported for",
        "exo does not pipeline-shard this model",
        "pipeline sharding asked of a model exo runs only whole or tensor-sharded",
        "use tensor sharding (as the message says), or one node",
        _P,
    ),
    fc(
        "exo.backend-mismatch",
        r"backends \[[^\]]*\] cannot satisfy engine|No cycle where every node supports a "
        r"backend in",
        "no set of nodes can run the model with the engine asked for: the model's backends "
        "and the engine's differ, or a node of every set lacks the backend",
        "an engine the model has no weights for (an MLX-only model on another engine), or a "
        "node that cannot run the backend (a Linux node without MLX, a Mac without the "
        "engine's build)",
        "pick an engine the model supports, or place it on nodes that all run its backend",
        _P,
    ),
)
