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


# One planted example of each kind of secret, as it appears in a file a bundle keeps
PGP = (
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXpgpsecretbody\n=Ab12\n"
    "-----END PGP PRIVATE KEY BLOCK-----"
)
PUTTY = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ann@mac1\n"
    "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIpublicpart\nAAAAmorepublic\n"
    "Private-Lines: 1\nAAAAIputtyprivatepart\nPrivate-MAC: 5f2b9c1e7d0a\n"
)
PLANTED = {
    "pgp": PGP,
    "putty": PUTTY,
    "url": "pulling https://ann:pw-url-9c1e@hub.example.org/models/x",
    "ghp": "GITHUB=ghp_" + "Q" * 36 + " and bare ghp_" + "R" * 36,
    "sk": "client(sk-proj-" + "S" * 40 + ")",
    "xoxb": "slack xoxb-1234567890-0987654321-" + "T" * 24,
    "session": "Cookie: session=sess-val-7d0a; theme=dark",
    "auth_key": "auth_key: authkey-val-2b9c",
    "env_key": '"envs": ["WANDB_KEY=wandbkey-val", "SSH_PRIVATE=sshpriv-val", '
    '"HTTP_AUTH=httpauth-val", "NCCL_IB_PKEY=0x8001"]',
}
LEAKS = (
    "lQOYBGXpgpsecretbody",
    "PuTTY-User-Key-File",  # the whole PuTTY file, its public lines and comment too
    "AAAAIputtyprivatepart",
    "publicpart",
    "ann@mac1",
    "pw-url-9c1e",
    "Q" * 36,
    "R" * 36,
    "S" * 40,
    "T" * 24,
    "sess-val-7d0a",
    "authkey-val-2b9c",
    "wandbkey-val",
    "sshpriv-val",
    "httpauth-val",
)


def test_every_planted_secret_is_removed_and_the_rest_is_kept():
    out = scrub("\n".join(PLANTED.values()), home="/Users/ann")
    leaked = [s for s in LEAKS if s in out.replace("<private key removed>", "")]
    assert not leaked, out
    # what is not secret stays: names, the host of the URL, the partition key, other pairs
    for kept in (
        "https://ann:<removed>@hub.example.org/models/x",
        "WANDB_KEY=<removed>",
        "SSH_PRIVATE=<removed>",
        "HTTP_AUTH=<removed>",
        "NCCL_IB_PKEY=0x8001",
        "theme=dark",
        "auth_key: <removed>",
        "GITHUB=<removed>",
    ):
        assert kept in out, out


def test_tool_fields_named_like_keys_are_not_secrets():
    text = "\tmax_pkeys:\t\t\t128\n\tport_cap_flags:\t\t0x04010000\nkeyboard=us\nmonkey: 1\n"
    assert scrub(text, home="/Users/ann") == text
    assert kept_env({"NCCL_IB_PKEY": "0x8001"}) == ({"NCCL_IB_PKEY": "0x8001"}, [])


def test_env_values_by_name_and_by_shape():
    env = {
        "MLX_AUTH": "a",
        "NCCL_PRIVATE": "b",
        "JACCL_SESSION": "c",
        "MLX_MODEL_URL": "https://u:pw@h/x",
        "NCCL_NET_PLUGIN_KEY": "d",
        "MLX_NOTE": "sk-ant-" + "x" * 30,
    }
    kept, removed = kept_env(env)
    assert set(removed) == set(env) and set(kept.values()) == {"<removed>"}
