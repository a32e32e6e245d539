"""What a support bundle never holds: secret values, private keys, tokens, home paths."""

from __future__ import annotations

from meshdoctor.bundle.redact import kept_env, scrub, secret_values


def test_kept_env_is_mlx_jaccl_nccl_with_secret_values_removed():
    env = {
        "NCCL_IB_TOKEN": "abc123",
        "NCCL_DEBUG": "INFO",
        "MLX_METAL_FAST_SYNCH": "1",
        "JACCL_X": "ghp_" + "a" * 36,
        "AWS_SECRET_ACCESS_KEY": "zzz",
        "HOME": "/Users/ann",
    }
    kept, removed = kept_env(env)
    assert kept == {
        "JACCL_X": "<removed>",
        "MLX_METAL_FAST_SYNCH": "1",
        "NCCL_DEBUG": "INFO",
        "NCCL_IB_TOKEN": "<removed>",
    }
    assert removed == ["JACCL_X", "NCCL_IB_TOKEN"]


def test_scrub_removes_keys_pairs_bearers_known_values_and_home():
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"
        'api_key=s3cr3t "password": "hunter2" Authorization: Bearer eyJhbGciOiJIUzI1\n'
        "/Users/ann/venv/bin/python /Users/annex/x value-xyz-1234\n"
    )
    out = scrub(text, home="/Users/ann", secrets=secret_values({"MY_TOKEN": "value-xyz-1234"}))
    assert "PRIVATE KEY-----\nMIIEow" not in out and "<private key removed>" in out
    assert "s3cr3t" not in out and "hunter2" not in out and "eyJhbGci" not in out
    assert "~/venv/bin/python" in out and "/Users/annex/x" in out  # another user's path stays
    assert "value-xyz-1234" not in out


def test_paths_are_not_mistaken_for_keys():
    assert secret_values({"PYTHONPATH": "/tmp/pytest-of-root/pytest-1/some_long_test_name/x"}) == []
