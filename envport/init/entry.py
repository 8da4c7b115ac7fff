"""ENV as a user types it (`gymnasium:Id`, a bare registered id, `package.module:factory`):
the spec's `reference.entry`, a name for the spec, and how to build the env."""

from __future__ import annotations

import importlib
import logging
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from envport.init.errors import InitError


@dataclass(frozen=True)
class EnvEntry:
    entry: str  # the spec's `reference.entry`
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def gymnasium_id(self) -> str | None:
        prefix, _, rest = self.entry.partition(":")
        return rest if prefix == "gymnasium" else None

    @property
    def name(self) -> str:
        """A spec name and default directory: `CartPole-v1` -> `cartpole`; a factory's env
        is named after its class (`CartPoleEnv` -> `cartpole`), not the factory (`make`)."""
        raw = self.gymnasium_id or self._class_name()
        raw = raw.rpartition("/")[2]
        raw = re.sub(r"-v\d+$", "", raw)
        return re.sub(r"[^a-z0-9]+", "_", raw.lower()).strip("_") or "env"

    def _class_name(self) -> str:
        """The env's class name without an `Env` suffix: the factory's own when it is the
        class, else the class of the env it builds (unwrapped: `gym.make` wraps it)."""
        factory = _factory(self.entry)
        if isinstance(factory, type):
            cls = factory
        else:
            try:
                env = self.make()
            except Exception:  # naming must not fail where inference reports the problem
                return self.entry.rpartition(":")[2]
            cls = type(getattr(env, "unwrapped", env))
            _close(env)
        return re.sub(r"(?<=.)Env$", "", cls.__name__)

    def make(self, *, checker: bool = True) -> Any:
        """The env as the verifier makes it (envport.targets.reference.make_env); without
        `checker`, Gymnasium's passive env checker is left out: it only validates, and its
        one-shot flag would look like state."""
        quiet()
        gid = self.gymnasium_id
        if gid is None:
            return _factory(self.entry)(**self.kwargs)
        import gymnasium

        extra = {} if checker else {"disable_env_checker": True}
        return gymnasium.make(gid, **self.kwargs, **extra)


def _close(env: Any) -> None:
    try:
        env.close()
    except Exception:  # an env that cannot close leaves nothing we need
        return


def quiet() -> None:
    # Stepping odd states triggers Gymnasium warnings that say nothing about inference.
    logging.getLogger("gymnasium").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="gymnasium")


def _factory(entry: str) -> Any:
    module_name, _, attr = entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise InitError(f"{entry}: cannot import `{module_name}`: {error}") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise InitError(f"{entry}: module `{module_name}` has no callable `{attr}`")
    return factory


def parse_env(text: str, kwargs: dict[str, Any] | None = None) -> EnvEntry:
    """`gymnasium:X`, a bare id Gymnasium registers, or `package.module:factory`."""
    import gymnasium

    prefix, sep, rest = text.partition(":")
    if sep and prefix != "gymnasium":
        if not prefix or not rest:
            raise InitError(
                f"{text}: expected `gymnasium:EnvId-v1`, `EnvId-v1` or `package.module:factory`"
            )
        _factory(text)
        return EnvEntry(text, dict(kwargs or {}))
    gid = rest if sep else text
    if gid not in gymnasium.registry:
        raise InitError(
            f"{gid}: not a registered Gymnasium id; give one of `gymnasium.envs.registry` "
            "(e.g. CartPole-v1) or `package.module:factory`"
        )
    return EnvEntry(f"gymnasium:{gid}", dict(kwargs or {}))
