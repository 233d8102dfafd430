"""A broker's own copy of the registry's state (``registry.node.mirror``), read from the
package's registry broker by this process: replayed, then exact on demand.

``refresh`` is what keeps validation from refusing a schema registered a moment before
the produce: once it returns, every registration answered before it was called is in
the state.  The mirror's reader is made to lag here (its fetches wait for a megabyte or
1.5 s), so a refresh that did not wait for it would find the new ids missing."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.registry.conftest import Served
from tests.registry.served import call

from samsa.registry.node.mirror import RegistryMirror

pytestmark = pytest.mark.integration


def test_refresh_sees_every_registration_answered_before_it(served: Served) -> None:
    async def run() -> None:
        lagging = {"fetch.min.bytes": 1 << 20, "fetch.max.wait.ms": 1500}
        mirror = RegistryMirror(
            {"bootstrap.servers": served.broker.bootstrap, **lagging}, "_schemas", "test-mirror"
        )
        try:
            assert not mirror.ready
            assert await mirror.wait_ready(30)
            for n in range(3):
                fields = [{"name": f"f{i}", "type": "int", "default": 0} for i in range(n)]
                schema = json.dumps({"type": "record", "name": "Mirrored", "fields": fields})
                answer = await asyncio.to_thread(
                    call,
                    served.url,
                    "POST",
                    "/subjects/mirrored-value/versions",
                    {"schema": schema},
                )
                assert answer.status == 200, answer.body
                schema_id = answer.json()["id"]
                assert await mirror.refresh(10)
                found = mirror.state.schema_by_id(schema_id)
                assert found is not None and found.subject == "mirrored-value"
            # Concurrent refreshes share the round trips and all come back true.
            assert all(await asyncio.gather(*(mirror.refresh(10) for _ in range(5))))
        finally:
            await mirror.stop()

    asyncio.run(run())
