"""What never goes into a support bundle: secret values, private keys, tokens, home paths.

Pure functions, one rule set for every file a bundle writes (:func:`scrub`), by name and by
value shape:

* **names**: a variable, JSON key or ``name=value``/``name: value`` pair whose name holds
  ``TOKEN``, ``SECRET``, ``PASSW``, ``CREDENTIAL``, ``COOKIE`` or ``API_KEY`` (also ``ACCESS_``,
  ``SSH_``, ``SIGNING_``, ``ENCRYPTION_``, ``MASTER_KEY``), or has ``AUTH``, ``PRIVATE`` or
  ``SESSION`` as one of its parts (split at ``_``, ``.``, ``-`` and camelCase), or ``KEY`` as an
  upper-case part (``WANDB_KEY``, ``SSH_PRIVATE``, ``HTTP_AUTH``, ``auth_key``, ``session``; not
  ``NCCL_IB_PKEY``, the InfiniBand partition key, ``max_pkeys``, or system_profiler's
  ``receptacle_id_key``) keeps its name and loses its value;
* **shapes**, wherever they are: private key blocks (PEM and OpenSSH ``-----BEGIN ... PRIVATE
  KEY-----``, RFC 7468; OpenPGP ``-----BEGIN PGP PRIVATE KEY BLOCK-----``, RFC 4880 section 6.2;
  PuTTY's ``PuTTY-User-Key-File-N:`` through its ``Private-MAC:`` line, PuTTY manual appendix C)
  removed whole; the password of a URL (``https://user:PASSWORD@host``, RFC 3986 section 3.2.1);
  ``Bearer``/``Basic`` credentials (RFC 6750, RFC 7617); provider tokens by their documented
  prefixes (GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``, GitLab ``glpat-``,
  Hugging Face ``hf_``, OpenAI/Anthropic ``sk-``, Slack ``xoxb-``/``xoxp-``/..., AWS access key
  ids ``AKIA``);
* the user's home directory is written ``~``.

An environment variable's whole value is also dropped when it is a run of 32 or more letters and
digits without a slash, as base64 or hex keys are (:func:`secret_value`). The environment kept
is what MLX, JACCL and NCCL read (``MLX_*``, ``JACCL_*``, ``NCCL_*``: MLX distributed
documentation, NCCL environment variables).
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

KEPT_PREFIXES = ("MLX_", "JACCL_", "NCCL_")
REMOVED = "<removed>"

# a name holding one of these anywhere, or having one of the parts below as a part of it
_NAME_ANYWHERE = re.compile(
    r"token|secret|passw|credential|cookie|(?:api|access|ssh|signing|encryption|master)[_.-]?key",
    re.I,
)
_NAME_PART = re.compile(
    r"(?:^|[_.-])(?i:auth|private|session(?:_?id)?)(?=$|[_.-]|[A-Z])"  # HTTP_AUTH, session
    r"|(?<=[a-z])(?:Auth|Private|Session(?:Id)?)(?=$|[_.-]|[A-Z])"  # authToken, privateKey
    # KEY as a variable's part (WANDB_KEY); lower case "_key" is system_profiler's naming
    r"|(?:^|_)KEY(?=$|_)"
)
# provider tokens by their documented prefixes (see the module doc)
_TOKEN = (
    r"(?:gh[opsur]|github_pat|hf)_[A-Za-z0-9_]{16,}|glpat-[A-Za-z0-9_-]{16,}"
    r"|sk-[A-Za-z0-9_-]{16,}|xox[a-z]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
)
_TOKEN_IN_TEXT = re.compile(rf"(?<![A-Za-z0-9_-])(?:{_TOKEN})")
_SECRET_VALUE = re.compile(
    r"-----BEGIN|PuTTY-User-Key-File-|^(?:Bearer|Basic)\s"
    r"|^(?:gh[opsur]|github_pat|hf)_|^(?:glpat|sk|xox[a-z])-|^AKIA[0-9A-Z]{12}"
    rf"|{_TOKEN}|^[A-Za-z][A-Za-z0-9+.-]*://[^\s/@]*:[^\s/@]+@"
    r"|^(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9+_=-]{32,}$"
)
_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[ \t]*[0-9A-Fa-f]*|\Z)",
    re.S,
)
_URL_PASSWORD = re.compile(r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:\"'<>]*:)[^\s/@\"'<>]+@")
_PAIR = re.compile(
    # a name starts after a character that cannot be in one, or after a JSON escape (\n, \t)
    r"(?P<name>(?:(?<![A-Za-z0-9_.\\-])|(?<=\\[nrt]))[A-Za-z0-9_.-]+)(?P<nq>[\"']?)(?P<sep>\s*[=:]\s*)(?P<q>[\"']?)"
    r"(?P<value>[^\s\"',;\\]+)"  # a backslash ends it: ``\n`` in JSON-escaped text
)
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9+/._=-]{8,}", re.I)


def secret_name(name: str) -> bool:
    """True when a variable, key or field named ``name`` likely holds a secret
    (``NCCL_IB_TOKEN``, ``WANDB_KEY``, ``auth_key``; not ``NCCL_IB_PKEY``)."""
    return bool(_NAME_ANYWHERE.search(name) or _NAME_PART.search(name))


def secret_value(value: str) -> bool:
    """True when ``value`` looks like a secret whatever its name (a key, a token, a PEM, a URL
    with a password)."""
    return bool(_SECRET_VALUE.search(value.strip()))


def kept_env(env: Mapping[str, str]) -> Tuple[Dict[str, str], List[str]]:
    """The variables of ``env`` a bundle keeps (``MLX_*``, ``JACCL_*``, ``NCCL_*``), sorted, with
    the values of secret-looking ones replaced by ``<removed>``; and the names whose values
    were removed."""
    out: Dict[str, str] = {}
    removed: List[str] = []
    for k in sorted(env):
        if not k.startswith(KEPT_PREFIXES):
            continue
        v = env[k]
        if secret_name(k) or secret_value(v):
            out[k] = REMOVED
            removed.append(k)
        else:
            out[k] = scrub(v)
    return out, removed


def secret_values(env: Mapping[str, str]) -> List[str]:
    """The values of every variable of ``env`` whose name or value looks like a secret (4
    characters or more), longest first: removed wherever they appear in a bundle's text."""
    vals = {v for k, v in env.items() if len(v) >= 4 and (secret_name(k) or secret_value(v))}
    return sorted(vals, key=len, reverse=True)


def _pair(m: "re.Match[str]") -> str:
    if secret_name(m["name"]):
        return f"{m['name']}{m['nq']}{m['sep']}{m['q']}{REMOVED}"
    # a pair inside the value (``Cookie=session=...`` read from its first name)
    return m.group(0)[: m.start("value") - m.start()] + _PAIR.sub(_pair, m["value"])


def scrub(text: str, home: Optional[str] = None, secrets: Sequence[str] = ()) -> str:
    """``text`` without private keys, secret pairs by name, URL passwords, bearer credentials,
    provider tokens (the module doc's rules), the values in ``secrets``
    (:func:`secret_values`), and with the home directory ``home`` (default: this user's)
    written ``~``."""
    if home is None:
        import os

        home = os.path.expanduser("~")
    for v in secrets:
        text = text.replace(v, REMOVED)
    text = _KEY_BLOCK.sub("<private key removed>", text)
    text = _URL_PASSWORD.sub(lambda m: f"{m['pre']}{REMOVED}@", text)
    text = _TOKEN_IN_TEXT.sub(REMOVED, text)
    text = _PAIR.sub(_pair, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REMOVED}", text)
    if home and home not in ("/", "") and len(home) > 1:
        text = re.sub(re.escape(home.rstrip("/")) + r"(?=/|\b|$)", "~", text)
    return text


def scrub_bytes(data: bytes, home: Optional[str] = None, secrets: Sequence[str] = ()) -> bytes:
    """:func:`scrub` of ``data`` read as UTF-8 (bytes that are not UTF-8 kept as they were)."""
    return scrub(data.decode("utf-8", "surrogateescape"), home, secrets).encode(
        "utf-8", "surrogateescape"
    )
