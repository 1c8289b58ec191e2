"""viewfinder.cdp: a CDP client over websockets, a Chromium launcher and page capture.

>>> from viewfinder.cdp import CdpBackend
>>> with CdpBackend(url="https://example.org") as backend:     # doctest: +SKIP
...     shot = backend.capture()

>>> from viewfinder.cdp import connect, launch_chromium
>>> async def title():                                          # doctest: +SKIP
...     with launch_chromium() as browser:
...         async with await connect(browser.http_url) as connection:
...             page = await connection.new_page("https://example.org")
...             return await page.evaluate("document.title")
"""

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without paying for what its modules import (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
