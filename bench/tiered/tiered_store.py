"""What the remote tier's stores do on this machine: segment uploads, fetch-sized range
reads and index probes, through Samsa's S3 store (obstore) against a real S3Proxy process,
and through the directory store.

    .venv/bin/python bench/tiered_store.py [--segment-mib 64] [--ranges 64] [--in-flight 8]

Prints MB/s for uploads and 1 MiB range reads (several in flight, as concurrent
remote fetches issue them), the mean latency of a 4 KiB range read (an index
probe), and the client's CPU seconds per GB moved.  Run ``scripts/object-store.sh``
first; the S3 server is started and stopped here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from samsa.testing.object_store import S3Server, load_object_store
from samsa.tiered.store import FileSystemRemoteStore, RemoteStore, S3RemoteStore, S3Settings

MIB = 1024 * 1024


async def measure(
    store: RemoteStore, segment: Path, ranges: int, in_flight: int
) -> dict[str, float]:
    size = segment.stat().st_size
    cpu, began = time.process_time(), time.perf_counter()
    for i in range(3):
        await store.put_file(f"bench/0/{i:020d}.log", segment)
    put_s = time.perf_counter() - began
    limit = asyncio.Semaphore(in_flight)

    async def one(i: int) -> None:
        async with limit:
            start = (i * 7 * MIB) % (size - MIB)
            assert len(await store.get_range(f"bench/0/{i % 3:020d}.log", start, MIB)) == MIB

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(ranges)))
    get_s = time.perf_counter() - began
    began = time.perf_counter()
    for i in range(100):
        await store.get_range("bench/0/00000000000000000000.log", i * 4096, 4096)
    probe_s = (time.perf_counter() - began) / 100
    cpu = time.process_time() - cpu
    moved_gb = (3 * size + ranges * MIB) / 1e9
    return {
        "upload MB/s": 3 * size / put_s / 1e6,
        "1 MiB ranges MB/s": ranges * MIB / get_s / 1e6,
        "4 KiB probe ms": probe_s * 1000,
        "client CPU s/GB": cpu / moved_gb,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segment-mib", type=int, default=64)
    parser.add_argument("--ranges", type=int, default=64)
    parser.add_argument("--in-flight", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="samsa-tiered-bench-") as tmp:
        root = Path(tmp)
        segment = root / "segment.log"
        segment.write_bytes(os.urandom(args.segment_mib * MIB))
        server = S3Server(load_object_store(), root / "buckets")
        server.start()
        try:
            bucket = server.create_bucket("bench")
            stores: dict[str, RemoteStore] = {
                f"S3Proxy {server.install.version} via obstore": S3RemoteStore(
                    S3Settings(
                        bucket,
                        endpoint=server.endpoint,
                        access_key_id=server.access_key,
                        secret_access_key=server.secret_key,
                        path_style=True,
                        bulk_delete=False,
                    )
                ),
                "directory": FileSystemRemoteStore(root / "remote"),
            }
            for name, store in stores.items():
                results = asyncio.run(measure(store, segment, args.ranges, args.in_flight))
                asyncio.run(store.close())
                print(f"{name}:")
                for key, value in results.items():
                    print(f"  {key:20s} {value:9.2f}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
