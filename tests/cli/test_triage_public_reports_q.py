"""Public failure reports of a small held-out blind sample (NCCL, oMLX on MLX), added after
its blind grade, each rebuilt from the report's own posted output and run through the
public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://blog.gitcode.com/c78323ca6ecbd73b92ec3459c9ac1ed1.html: a connect abort to a peer address of another subnet (the interface setting not on every node)
    (
        "gitcode-blog-c78323ca6ecbd73b92ec3459c9ac1ed1",
        {
            "log.txt": "jnlh102072:8969:8969 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.37.12.78<46417> failed : Software caused connection abort\n...\nRuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n",
        },
        "MD653",
        ["another subnet", "NCCL_SOCKET_IFNAME"],
    ),
    # https://github.com/jundot/omlx/issues/1522: oMLX's memory guard on a transient prefill peak
    (
        "jundot-omlx-1522",
        {
            "log.txt": "omlx.scheduler - WARNING - Prefill force-stopped at 1441 tokens: memory 42.8GB exceeds ceiling 42.0GB\nomlx.scheduler - ERROR   - Prefill failed for <id>: Memory limit exceeded during prefill\nomlx.server    - ERROR   - Error during chat streaming: Memory limit exceeded during prefill\nomlx.process_memory_enforcer - INFO - Memory pressure level: hard -> ok (current=24.6GB, soft=35.7GB, hard=39.9GB, ceiling=42.0GB)\n",
        },
        "MD883",
        ["memory guard", "smaller chunks"],
    ),
    # https://github.com/jundot/omlx/issues/282: mx.compile of a function whose outputs are not arrays
    (
        "jundot-omlx-282",
        {
            "log.txt": "RuntimeError: [eval] Attempting to eval an array without a primitive.\n",
        },
        "MD816",
        ["without a primitive", "compile"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
