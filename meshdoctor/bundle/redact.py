"""What never goes into a support bundle: secret values, private keys, tokens, home paths.

Pure functions. An environment variable whose name looks like a secret (``TOKEN``, ``SECRET``,
``PASSW``, ``KEY``, ``CREDENTIAL``, ``AUTH``, ``COOKIE``, ``SESSION``, ``PRIVATE``) or whose value
looks like one (a PEM block, a bearer token, a ``ghp_``/``sk-``/``xox``-style key, a run of 32 or
more letters and digits without a slash, as base64 or hex keys are) keeps its name and loses its value. In text, PEM private-key blocks, ``name=value``
pairs with a secret-looking name, bearer tokens and the user's home directory (as ``~``) are
replaced. The environment kept is what MLX, JACCL and NCCL read (``MLX_*``, ``JACCL_*``,
``NCCL_*``: MLX distributed documentation, NCCL environment variables).
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

KEPT_PREFIXES = ("MLX_", "JACCL_", "NCCL_")
REMOVED = "<removed>"

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|KEY|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|API_?KEY", re.I
)
_SECRET_VALUE = re.compile(
    r"-----BEGIN|^Bearer\s|^(?:ghp|gho|ghs|github_pat|glpat|hf|xox[abp])_|^sk-|^AKIA[0-9A-Z]{12}"
    r"|^(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9+_=-]{32,}$"
)
_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S
)
_PAIR = re.compile(
    r"(?P<name>\b[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d?|api[_-]?key|credential|cookie)"
    r"[A-Za-z0-9_.-]*)(?P<nq>[\"']?)(?P<sep>\s*[=:]\s*)(?P<q>[\"']?)(?P<value>[^\s\"',;]+)",
    re.I,
)
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9+/._=-]{8,}", re.I)


def secret_name(name: str) -> bool:
    """True when a variable named ``name`` likely holds a secret (``NCCL_IB_TOKEN``)."""
    return bool(_SECRET_NAME.search(name))


def secret_value(value: str) -> bool:
    """True when ``value`` looks like a secret whatever its name (a key, a token, a PEM)."""
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


def scrub(text: str, home: Optional[str] = None, secrets: Sequence[str] = ()) -> str:
    """``text`` without private keys (PEM blocks), secret ``name=value`` pairs, bearer tokens,
    the values in ``secrets`` (:func:`secret_values`), and with the home directory ``home``
    (default: this user's) written ``~``."""
    if home is None:
        import os

        home = os.path.expanduser("~")
    for v in secrets:
        text = text.replace(v, REMOVED)
    text = _PEM.sub("<private key removed>", text)
    text = _PAIR.sub(lambda m: f"{m['name']}{m['nq']}{m['sep']}{m['q']}{REMOVED}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REMOVED}", text)
    if home and home not in ("/", "") and len(home) > 1:
        text = re.sub(re.escape(home.rstrip("/")) + r"(?=/|\b|$)", "~", text)
    return text
