"""viewfinder.browser: ``browser_execute`` runs a snippet against a page over CDP and
returns every screenshot it took as image attachments.

>>> from viewfinder.browser import BrowserSession
>>> with BrowserSession(url="https://example.org") as session:      # doctest: +SKIP
...     result = session.execute('''
... print(await page.title())
... await page.screenshot()
... await page.screenshot(format="jpeg")
... ''')
>>> result.output                                                    # doctest: +SKIP
'Example Domain\n[2 screenshots attached]'
>>> [shot.mime_type for shot in result.screenshots]                  # doctest: +SKIP
['image/png', 'image/jpeg']
"""

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without paying for what its modules import (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
