"""triage/unheard.py's pure readings: the launch line, the hosts heard, Open MPI's by-slot map."""

from __future__ import annotations

from meshdoctor.triage.unheard import open_mpi_ranks, read_text


def test_launch_line_hosts_and_memory_warning_are_read():
    h = read_text(
        "$ mpirun -np 3 --hostfile hosts.txt python3 pipeline_generate.py\n"
        "[ring] Receiving from socket 3 failed with errno 104\n"
        "[WARN] Node with rank 1 exited with code 1\n"
        "[machine1] [WARNING] Generating with a model that requires 105432 MB which is close "
        "to the maximum recommended size of 157286 MB.\n"
        "[machine2:51234] *** Process received signal ***\n"
        "[12:00] a timestamp, not a host\n"
    )
    assert (h.size, h.hostfile) == (3, "hosts.txt")
    assert list(h.hosts) == ["machine1", "machine2"]
    assert h.memory == {"machine1": (105432, 157286)}


def test_mlx_launch_host_list_is_the_world():
    h = read_text("$ mlx.launch --hosts m1,m2,m3 --backend ring job.py\n[m1] hello\n")
    assert h.size == 3 and h.listed == ("m1", "m2", "m3")


def test_by_slot_mapping_of_a_hostfile():
    text = "# cluster\nmachine1 slots=2\nmachine2\nmachine3 slots=1 max_slots=4\n"
    assert open_mpi_ranks(text, 4) == ("machine1", "machine1", "machine2", "machine3")
    assert open_mpi_ranks(text, 5) == ()
