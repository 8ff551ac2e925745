"""An exporter whose pieces wait at a gate, for tests that need a piece to be mid-way when
its export is given up. It lives in a module of its own (not a test file) so that worker
processes, which import what they run, can unpickle it. The tests import it as
``export_gate``."""

from __future__ import annotations

import os
import time

from browser_app.export.staging import PieceRun
from browser_app.export.tfrecord import TFRecordExporter


class GatedExporter(TFRecordExporter):
    """TFRecord shards, each written as usual, then held until the file ``<folder>/open``
    exists (at most ``wait`` seconds); ``<folder>/reached-<piece>`` says that the piece got
    there. Its task then hands the piece back (uploading a remote one) as every piece does."""

    def __init__(self, dst: str, folder: str, *, shards: int, wait: float = 60.0) -> None:
        super().__init__(dst, compression="none", shards=shards)
        self.folder = folder
        self.wait = wait

    def write(self, job: PieceRun) -> None:
        super().write(job)
        name = os.path.basename(job.dsts[0])
        with open(os.path.join(self.folder, f"reached-{name}"), "w"):
            pass
        deadline = time.monotonic() + self.wait
        while not os.path.exists(os.path.join(self.folder, "open")):
            if time.monotonic() > deadline:
                raise TimeoutError("the test never opened the gate")
            time.sleep(0.02)
