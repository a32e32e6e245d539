"""``meshdoctor triage`` on public failure reports (exo, oMLX, MLX) whose first cause was read
wrongly by a line-at-a-time reading: each input cites its thread; each test asserts the first
cause named, what it means and what to do, and which findings are only its consequences."""

from __future__ import annotations

from typing import List

from tests.helpers import triage_files as triage


def firsts(doc: dict) -> List[dict]:
    return [f for f in doc["triage"]["findings"] if f["first_cause"]]


def by_code(doc: dict, code: str) -> List[dict]:
    return [f for f in doc["triage"]["findings"] if f["code"] == code]


# https://github.com/ml-explore/mlx/issues/1849 (two Macs, MPI backend, send/recv): verbatim
# mpirun output of two hosts, the MPI teardown banner printed before the Metal exception
MPI_GPU_TIMEOUT = """\
[Asilomar:48790] *** Process received signal ***
[Asilomar:48790] Signal: Abort trap: 6 (6)
[Asilomar:48790] Signal code:  (0)
[Asilomar:48790] [ 0] 0   libsystem_platform.dylib            0x000000019057ede4 _sigtramp + 56
[Asilomar:48790] [ 1] 0   libsystem_pthread.dylib             0x0000000190547f70 pthread_kill + 288
[Asilomar:48790] [ 2] 0   libsystem_c.dylib                   0x0000000190454908 abort + 128
[Asilomar:48790] *** End of error message ***
[PaloAlto:00000] *** An error occurred in Socket closed
[PaloAlto:00000] *** reported by process [3543269377,0]
[PaloAlto:00000] *** on a NULL communicator
[PaloAlto:00000] *** Unknown error
[PaloAlto:00000] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
[PaloAlto:00000] ***    and MPI will try to terminate your MPI job as well)
libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command \
buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)
[PaloAlto:17633] *** Process received signal ***
[PaloAlto:17633] Signal: Abort trap: 6 (6)
[PaloAlto:17633] *** End of error message ***
"""


def test_the_metal_gpu_timeout_is_the_cause_and_the_mpi_abort_banner_its_echo(tmp_path):
    doc = triage(tmp_path, {"mpirun.log": MPI_GPU_TIMEOUT})
    (f,) = firsts(doc)
    assert f["code"] == "MD616" and "stream=mx.cpu" in f["remedy"]
    (mpi,) = by_code(doc, "MD699")
    assert mpi["consequence_of"] == f["id"]


def test_the_mpi_abort_banner_alone_is_only_an_echo(tmp_path):
    banner = "\n".join(MPI_GPU_TIMEOUT.splitlines()[7:13]) + "\n"
    doc = triage(tmp_path, {"mpirun.log": banner})
    (f,) = firsts(doc)
    assert f["code"] == "MD699" and f["role"] == "consequence"


# https://github.com/jundot/omlx/issues/2735 (oMLX coordinator; the worker Mac started with
# the system python3): the ModuleNotFoundError line is the report's
OMLX_NO_MODULE = """\
2026-08-16 21:04:12,033 INFO omlx.cluster.staging: staging model \
/Users/studio/.omlx/models-production/Qwen3-32B-4bit to worker mac-mini
2026-08-16 21:04:19,870 INFO omlx.cluster.launcher: mlx.launch --backend ring --hostfile \
/Users/studio/.omlx/cluster/hosts.json -- python3 -m omlx.cluster.inference_worker
/usr/bin/python3: Error while finding module specification for 'omlx.cluster.inference_worker' \
(ModuleNotFoundError: No module named 'omlx')
[WARN] Node with rank 1 exited with code 1
2026-08-16 21:04:52,112 ERROR omlx.cluster.launcher: activation failed: rank 1 (mac-mini) \
exited with code 1
"""


def test_a_rank_started_with_the_system_python_names_the_interpreter(tmp_path):
    doc = triage(tmp_path, {"coordinator.log": OMLX_NO_MODULE})
    (f,) = firsts(doc)
    assert f["code"] == "MD870"
    assert "/usr/bin/python3 has no module 'omlx'" in f["meaning"]
    assert "mlx.launch --python" in f["remedy"]
    (exited,) = by_code(doc, "MD657")
    assert exited["consequence_of"] == f["id"]


def test_a_missing_module_in_a_rank_traceback_is_the_same_kind(tmp_path):
    log = (
        "Traceback (most recent call last):\n"
        '  File "/srv/train.py", line 1, in <module>\n'
        "    import mlx_lm\n"
        "ModuleNotFoundError: No module named 'mlx_lm'\n"
        "[WARN] Node with rank 0 exited with code 1\n"
    )
    (f,) = firsts(triage(tmp_path, {"rank0.log": log}))
    assert f["code"] == "MD870" and "'mlx_lm'" in f["meaning"]


# https://github.com/exo-explore/exo/issues/1325 (exo on a 4-node M3 Ultra cluster): an exo
# crash report (bug_type 309) around the fields the report quotes, the mangled symbol verbatim
EXO_RUST_PANIC = '{"app_name":"exo","timestamp":"2026-01-26 18:12:04.00 -0800","app_version":"1.0.63","slice_uuid":"4c1b2a90-7d3e-3f5a-9b6c-0e1d2c3b4a59","build_version":"1.0.63","platform":1,"bundleID":"exolabs.EXO","share_with_app_devs":0,"is_first_party":0,"bug_type":"309","os_version":"macOS 26.2 (25C56)","roots_installed":0,"name":"exo","incident_id":"9E8D7C6B-5A49-4382-A1B0-C9D8E7F6A5B4"}\n{\n  "uptime" : 8200,\n  "procRole" : "Foreground",\n  "version" : 2,\n  "userID" : 501,\n  "deployVersion" : 210,\n  "modelCode" : "Mac15,14",\n  "captureTime" : "2026-01-26 18:12:03.9120 -0800",\n  "pid" : 2231,\n  "procName" : "exo",\n  "procPath" : "\\/Applications\\/EXO.app\\/Contents\\/MacOS\\/exo",\n  "exception" : {"codes":"0x0000000000000000, 0x0000000000000000","rawCodes":[0,0],"type":"EXC_CRASH","signal":"SIGABRT"},\n  "termination" : {"flags":0,"code":6,"namespace":"SIGNAL","indicator":"Abort trap: 6","byProc":"exo","byPid":2231},\n  "asi" : {"libsystem_c.dylib":["abort() called"]},\n  "faultingThread" : 7,\n  "threads" : [{"id":90001,"queue":"com.apple.main-thread","frames":[{"imageOffset":14052,"symbol":"__psynch_cvwait","symbolLocation":8,"imageIndex":2}]},{"id":90002,"frames":[]},{"id":90003,"frames":[]},{"id":90004,"frames":[]},{"id":90005,"frames":[]},{"id":90006,"frames":[]},{"id":90007,"frames":[]},{"triggered":true,"id":90008,"name":"tokio-runtime-worker","threadState":{"flavor":"ARM_THREAD_STATE64"},"frames":[{"imageOffset":38020,"symbol":"__pthread_kill","symbolLocation":8,"imageIndex":2},{"imageOffset":26700,"symbol":"pthread_kill","symbolLocation":296,"imageIndex":3},{"imageOffset":498324,"symbol":"abort","symbolLocation":124,"imageIndex":4},{"imageOffset":9912204,"symbol":"std::sys::pal::unix::abort_internal","symbolLocation":12,"imageIndex":5},{"imageOffset":9871032,"symbol":"std::panicking::rust_panic_with_hook","symbolLocation":1120,"imageIndex":5},{"imageOffset":4418512,"symbol":"_RNCNvMsJ_NtCsb8HrQ7j5gqT_17exo_pyo3_bindings10networkingNtB7_18PyNetworkingHandle6py_new","symbolLocation":2044,"imageIndex":5}]}],\n  "usedImages" : [{"source":"P","arch":"arm64e","name":"dyld"},{"source":"P","arch":"arm64","name":"exo"},{"source":"P","arch":"arm64e","name":"libsystem_kernel.dylib"},{"source":"P","arch":"arm64e","name":"libsystem_pthread.dylib"},{"source":"P","arch":"arm64e","name":"libsystem_c.dylib"},{"source":"P","arch":"arm64","name":"exo_pyo3_bindings.cpython-313-darwin.so"}]\n}\n'


def test_a_rust_panic_names_the_binding_function_not_the_abort_frames(tmp_path):
    doc = triage(tmp_path, {"exo-2026-01-26-181204.ips": EXO_RUST_PANIC})
    (f,) = firsts(doc)
    assert f["code"] == "MD871"
    assert "exo_pyo3_bindings::networking::PyNetworkingHandle::py_new" in f["meaning"]
    assert "tokio-runtime-worker" in f["meaning"] and "abort_internal" not in f["line"]
    assert "not MLX, Metal or the RDMA driver" in f["meaning"]


# https://github.com/exo-explore/exo/issues/2219 (a 5-node exo MlxRing instance wedges on its
# first request): rank 3's stderr as the reporter found it; the other ranks print nothing more
EXO_RING_WEDGE = {
    "rank0-m5max.log": "[ 2026-07-13 16:20:44.010 | INFO     | exo.worker.runner.runner_supervisor"
    ":start_task:182 ] Starting task ChatCompletion(task_id='e7f8a9b0')\n"
    "[ 2026-07-13 16:20:44.388 | INFO     | exo.worker.engines.mlx.generator.generate:"
    "mlx_generate:301 ] prefill 38 tokens (shard r0=[0,6))\n",
    "rank2-spark.log": "[ 2026-07-13 16:20:44.497 | INFO     | exo.worker.runner.runner_supervisor"
    ":start_task:182 ] Starting task ChatCompletion(task_id='e7f8a9b0')\n",
    "rank3-thor.log": "[ 2026-07-13 16:20:44.512 | INFO     | exo.worker.runner.runner_supervisor"
    ":start_task:182 ] Starting task ChatCompletion(task_id='e7f8a9b0')\n"
    + "[ring] Receiving from socket 51 failed with errno 54\n" * 10
    + "[ring] Too many send/recv errors. Aborting...\n",
}


def test_a_ring_reset_is_the_cause_and_the_quiet_ranks_hang_not_die(tmp_path):
    doc = triage(tmp_path, EXO_RING_WEDGE)
    (f,) = firsts(doc)
    assert f["code"] == "MD872" and f["rank"] == 3
    assert "waiting, not dead" in f["meaning"] and "rank 0, rank 2" in f["meaning"]
    assert "Tailscale" in f["remedy"] and "0.32.0" in f["remedy"]
    assert by_code(doc, "MD691") == []
    assert {x["consequence_of"] for x in doc["triage"]["findings"] if x is not f} == {f["id"]}


def test_a_quiet_rank_with_a_kill_status_stays_the_silent_suspect(tmp_path):
    files = dict(EXO_RING_WEDGE, **{"launch.log": "[WARN] Node with rank 0 exited with code -9\n"})
    doc = triage(tmp_path, files)
    assert by_code(doc, "MD872") == []


# https://github.com/ml-explore/mlx/issues/3149 (JACCL send/recv of different shapes right
# after init: wrong data, then a hang; the user pressed Ctrl-C): reconstructed from the report
P2P_RACE = {
    "launch.log": "$ mlx.launch --backend jaccl --hostfile m4-jaccl.json test_fail.py\n^C\n[WARN] Node with rank 0 exited with code -15\n[WARN] Node with rank 1 exited with code -15\n",
    "rank0.log": "[rank 0] jaccl group size=2\n[rank 0] send a shape=(1024,) dtype=float32\n[rank 0] send b shape=(4, 256) dtype=float32\n[rank 0] send c shape=(16,) dtype=float32\n",
    "rank1.log": "[rank 1] jaccl group size=2\n[rank 1] recv a shape=(1024,) ok=False max_abs_err=3.4e+38\n[rank 1] recv b shape=(4, 256) ...\n",
    "rank1-pyspy.txt": '$ py-spy dump --pid 60412\nProcess 60412: /Users/t/miniconda3/envs/rdma/bin/python test_fail.py\nPython v3.12.8 (/Users/t/miniconda3/envs/rdma/bin/python3.12)\n\nThread 0x1F0A3C000 (idle): "MainThread"\n    recv_like (mlx/core/distributed.py:0)\n    main (test_fail.py:41)\n    <module> (test_fail.py:58)\n',
}


def test_a_recv_hang_with_wrong_data_outranks_the_interrupt_teardown(tmp_path):
    doc = triage(tmp_path, P2P_RACE)
    (f,) = firsts(doc)
    assert f["code"] == "MD873" and f["rank"] == 1
    assert "blocked in recv_like" in f["meaning"] and "ok=False" in f["meaning"]
    assert "mx.eval(mx.distributed.all_sum(mx.ones(1)))" in f["remedy"]
    assert {x["code"] for x in doc["triage"]["findings"] if not x["first_cause"]} == {"MD657"}
    assert all(x["consequence_of"] == f["id"] for x in by_code(doc, "MD657"))


# https://github.com/jundot/omlx/issues/3521 (sampling_rank_only: rank 1 blocked in a step
# that holds an all_sum): the py-spy dump is the report's, the readiness error is quoted in it
OMLX_DEADLOCK = {
    "coordinator.log": "2026-09-08 11:42:07,118 INFO omlx.cluster: cluster ready: 2 ranks (ring), model mlx-community/GLM-4.5-Air-4bit, pipeline, sampling_rank_only=true\n2026-09-08 11:42:09,530 INFO omlx.server: POST /v1/completions prompt_tokens=6\n2026-09-08 11:47:09,544 ERROR omlx.cluster.health: readiness failed: no rank-zero data for 300s while the cluster was ready\n",
    "rank1-pyspy.txt": '$ py-spy dump --pid 41877\nProcess 41877: /opt/omlx/venv/bin/python -m omlx.cluster.inference_worker --rank 1\nPython v3.12.9 (/opt/omlx/venv/bin/python3.12)\n\nThread 136114 (idle): "Thread-1 (_generate)"\n    coordinator_generation_step (omlx/cluster/runtime_optimizations.py:513)\n    next (mlx_lm/generate.py:1415)\n    _next (mlx_lm/generate.py:1775)\n    next (mlx_lm/generate.py:1855)\n    next (omlx/cluster/telemetry.py:1407)\n    _generate (mlx_lm/server.py:853)\n    generate_on_rank_stream (omlx/cluster/inference_worker.py:132)\n    run (threading.py:1012)\n    _bootstrap_inner (threading.py:1075)\n    _bootstrap (threading.py:1032)\nThread 136001 (idle): "MainThread"\n    wait (threading.py:359)\n    serve_forever (omlx/cluster/inference_worker.py:88)\n    <module> (omlx/cluster/inference_worker.py:211)\n',
}


def test_a_readiness_timeout_with_a_stack_in_a_step_is_a_hang_never_go(tmp_path):
    doc = triage(tmp_path, OMLX_DEADLOCK)
    (f,) = firsts(doc)
    assert f["code"] == "MD873" and f["rank"] == 1
    assert (
        "coordinator_generation_step at omlx/cluster/runtime_optimizations.py:513" in (f["meaning"])
    )
    assert "readiness failed" in f["meaning"] and "triage --running" in f["remedy"]


# https://github.com/exo-explore/exo/issues/1847 (3-node M3 Ultra over TB5 RDMA): the error
# lines are the report's, the exo framing reconstructed
EXO_RTR_AFTER_DROP = {
    "node-a.log": "[ 2026-04-07 09:41:12.301 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner 1b2c3d4e-5f60-4a71-8b92-c3d4e5f60718 crashed with critical exception [jaccl] Recv failed with errno=60\nRuntimeError: [jaccl] Recv failed with errno=60\n[ 2026-04-07 09:43:55.720 | INFO     | exo.worker.main:plan_step:214 ] Worker plan: ConnectToGroup\n[ 2026-04-07 09:43:55.731 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner 2c3d4e5f-6071-4b82-9ca3-d4e5f6071829 crashed with critical exception [jaccl] Changing queue pair to RTR failed with errno 22\nValueError: [jaccl] Changing queue pair to RTR failed with errno 22\n[ 2026-04-07 09:44:31.018 | INFO     | exo.worker.main:plan_step:214 ] Worker plan: ConnectToGroup\n[ 2026-04-07 09:44:31.029 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner 3d4e5f60-7182-4c93-adb4-e5f60718293a crashed with critical exception [jaccl] Changing queue pair to RTR failed with errno 22\nValueError: [jaccl] Changing queue pair to RTR failed with errno 22\n",
    "node-b.log": "[ 2026-04-07 09:41:12.288 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner 4e5f6071-8293-4da4-bec5-f60718293a4b crashed with critical exception [jaccl] Recv failed with errno=2\nRuntimeError: [jaccl] Recv failed with errno=2\n[ 2026-04-07 09:43:55.733 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner 5f607182-93a4-4eb5-8fd6-0718293a4b5c crashed with critical exception [jaccl] Changing queue pair to RTR failed with errno 22\nValueError: [jaccl] Changing queue pair to RTR failed with errno 22\n",
}


def test_rtr_einval_on_every_node_after_a_drop_is_stale_rdma_reboot_not_gid(tmp_path):
    doc = triage(tmp_path, EXO_RTR_AFTER_DROP)
    (f,) = firsts(doc)
    assert f["code"] == "MD874" and "Recv failed" in f["line"]
    assert "not a GID or address setup problem" in f["meaning"]
    assert "Reboot every node" in f["remedy"] and "long-lived" in f["remedy"]
    assert all(x["consequence_of"] == f["id"] for x in by_code(doc, "MD601"))


def test_rtr_einval_without_a_drop_before_it_stays_a_gid_problem(tmp_path):
    only_rtr = {k: v.split("\n", 2)[2] for k, v in EXO_RTR_AFTER_DROP.items()}
    doc = triage(tmp_path, only_rtr)
    assert by_code(doc, "MD874") == [] and firsts(doc)[0]["code"] == "MD601"


# https://github.com/exo-explore/exo/issues/2309 (2-node Thunderbolt cluster, MLX ring): exo
# runner logs reconstructed from the report (master on en0, the worker's list on the bridge)
EXO_VIEWS = {
    "master-exo.log": '[ 2026-09-13 09:12:40.598 | INFO     | exo.worker.engines.mlx.utils_mlx:mlx_distributed_init:97 ] Starting initialization for rank 0\n[ 2026-09-13 09:12:40.599 | INFO     | exo.worker.engines.mlx.utils_mlx:mlx_distributed_init:120 ] rank 0 hostfile: /var/folders/2k/T/hosts_5a1e_0.json hosts: ["0.0.0.0:52817","192.168.204.31:52817"]\n[ 2026-09-13 09:13:41.240 | WARNING  | exo.worker.main:_on_runner_failed:488 ] runner on peer failed; shutting down instance 5a1e\n',
    "worker-exo.log": "[ 2026-09-13 09:12:40.611 | INFO     | exo.worker.engines.mlx.utils_mlx:mlx_distributed_init:97 ] Starting initialization for rank 1\n[ 2026-09-13 09:12:40.612 | INFO     | exo.worker.engines.mlx.utils_mlx:mlx_distributed_init:120 ] rank 1 hostfile: /var/folders/7q/T/hosts_5a1e_1.json hosts: [\"10.10.0.2:52817\",\"0.0.0.0:52817\"]\n[ring] Couldn't connect (error: 61). Retrying...\n[ring] Couldn't connect (error: 61). Retrying...\n[ring] Couldn't connect (error: 61). Retrying...\n[ 2026-09-13 09:13:41.020 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner 2c7e81d0-44a1-4f06-9a3b-6b1f0d2e9c11 crashed with critical exception [ring] Couldn't connect (error: 60)\nRuntimeError: [ring] Couldn't connect (error: 60)\n",
}


def test_hostfiles_that_disagree_on_rank_0_are_the_cause_of_the_refused_connect(tmp_path):
    doc = triage(tmp_path, EXO_VIEWS)
    (f,) = firsts(doc)
    assert f["code"] == "MD875" and f["rank"] == 1
    assert "rank 1 dials rank 0 at 10.10.0.2" in f["meaning"]
    assert "192.168.204.31" in f["meaning"] and "same hostfile" in f["remedy"]
    (refused,) = by_code(doc, "MD621")
    assert refused["consequence_of"] == f["id"]


def test_hostfiles_on_one_network_leave_the_refused_connect_first(tmp_path):
    same = dict(
        EXO_VIEWS,
        **{"worker-exo.log": EXO_VIEWS["worker-exo.log"].replace("10.10.0.2", "192.168.204.30")},
    )
    doc = triage(tmp_path, same)
    assert by_code(doc, "MD875") == [] and firsts(doc)[0]["code"] == "MD621"
