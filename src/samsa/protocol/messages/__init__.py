"""Registry of every API schema Samsa speaks.

Each module in this package declares one or more ``Api`` objects named ``API``
(or ``APIS``, a list); they are collected here keyed by API key, so adding an
API is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil

from samsa.protocol.schema import Api


def _collect() -> dict[int, Api]:
    found: dict[int, Api] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        apis = list(getattr(module, "APIS", []))
        if hasattr(module, "API"):
            apis.append(module.API)
        for api in apis:
            if api.key in found:
                raise RuntimeError(f"API key {api.key} declared twice ({info.name})")
            found[api.key] = api
    return dict(sorted(found.items()))


APIS: dict[int, Api] = _collect()
