"""The environment a child process gets: a short allow-list of the server's variables, then the caller's.

Never the server's tokens, credentials or ``MCP_IDE_*`` settings (SECURITY.md §4); proxy URLs that
carry credentials are dropped. :data:`TAG_VAR` is the one variable the engine adds itself: it marks
every process of one command's tree so the tree is found again through ``/proc``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ..failures import ToolFailure
from .sendable import check_sendable

TAG_VAR = "MCP_IDE_PROC_TAG"
"""Environment variable carrying each process tree's tag (found again through /proc/PID/environ)."""

PASS_ENV: set[str] = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "TERM",
    "COLORTERM",
    "EDITOR",
    "VISUAL",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOCACHE",
    "GOMODCACHE",
    "GOPROXY",
    "GOFLAGS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "NVM_DIR",
    "PNPM_HOME",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYENV_ROOT",
    "PIPX_HOME",
    "UV_CACHE_DIR",
    "DOTNET_ROOT",
    "ANDROID_HOME",
    "GRADLE_USER_HOME",
    "MAVEN_HOME",
    "M2_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
}
"""Server variables a child sees (plus ``LC_*``). The CLI may add names (``--pass-env``)."""

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_?KEY|_KEY$|^KEY|AUTH|COOKIE|SESSION"
    r"|^MCP_IDE_|^AWS_|^AZURE_|^GCP_|^GOOGLE_APPLICATION|^GH_|^GITHUB_|^ANTHROPIC|^OPENAI|^HF_|^NPM_CONFIG_",
    re.IGNORECASE,
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_secret_name(name: str) -> bool:
    """Whether a variable name looks like it holds a credential or a server setting."""
    return bool(_SECRET_NAME.search(name))


def child_env(extra: Mapping[str, str | None] | None = None, *, term: str | None = None) -> dict[str, str]:
    """The environment of a child: allow-listed server variables (never secrets), then ``extra``.

    ``extra`` is the caller's own (a value of ``None`` removes a variable). Proxy variables whose
    URL carries credentials are dropped.
    """
    env: dict[str, str] = {}
    for name, value in os.environ.items():
        if (name in PASS_ENV or name.startswith("LC_")) and not is_secret_name(name):
            if "proxy" in name.lower() and "@" in value:
                continue
            env[name] = value
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    if term is not None:
        env["TERM"] = term
    for name, value in (extra or {}).items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise ToolFailure(
                f"invalid environment variable name {name!r} (rule: names are letters, digits and '_', "
                "not starting with a digit)"
            )
        if name == TAG_VAR:
            continue
        if value is None:
            env.pop(name, None)
            continue
        value = str(value)
        if "\x00" in value:
            raise ToolFailure(f"invalid value for environment variable {name!r}: it contains a NUL byte")
        check_sendable(value, f"value for environment variable {name!r}")
        env[name] = value
    return env
