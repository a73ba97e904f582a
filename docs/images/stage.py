"""The README's picture of the stage mid-run (docs/images/stage.png), made from the real app.

    python docs/images/stage.py [--lesson 7.3] [--step 3] [--out docs/images/stage.png]

Starts this checkout's app on a free loopback port (as the browser tests do), opens the lesson at
that step with its predictions off in Debian's headless Chromium (/usr/bin/chromium), waits for the
stage to show the step, and saves the stage (its controls, the slot grid, the queue, the narration
and the KV pool) at twice its size in pixels, as a palette PNG (at most 256 colours, which keeps it
well under 300 KB; the README shows it at its CSS size). Rerun it when the stage's look changes.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402  (Pillow comes with Streamlit)
from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser_support import STAGE, launch, streamlit_server, wait_for_stage_step  # noqa: E402

MAX_BYTES = 300_000
VIEWPORT = {"width": 1280, "height": 1000}


def shoot(lesson: str, step: int) -> bytes:
    """A PNG of the lesson's stage at `step`."""
    with streamlit_server() as url, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport=VIEWPORT, device_scale_factor=2)  # sharp on a high-density screen
        page.goto(f"{url}/?lesson={lesson}&step={step}&predict=false")
        page.locator(STAGE).first.wait_for(timeout=120_000)
        wait_for_stage_step(page, step, timeout=60)
        page.wait_for_timeout(1500)  # the last chips settle
        png = page.locator(STAGE).first.screenshot()
        browser.close()
    return png


def smaller(png: bytes) -> bytes:
    """The same picture with a palette of at most 256 colours."""
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lesson", default="7.3", help="a lesson's number or name (7.3: preemption)")
    parser.add_argument("--step", type=int, default=3, help="the step shown (3: C is preempted)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "stage.png")
    args = parser.parse_args(argv)
    png = smaller(shoot(args.lesson, args.step))
    if len(png) > MAX_BYTES:
        print(f"error: the picture is {len(png):,} bytes, over {MAX_BYTES:,}", file=sys.stderr)
        return 1
    args.out.write_bytes(png)
    print(f"{args.out}: {len(png):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
