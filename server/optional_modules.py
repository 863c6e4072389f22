"""Optional modules gradio looks for on every call, remembered as missing when they are.

gradio 6.31 tries `import matplotlib` twice around every queued call (utils.MatplotlibBackendMananger, to switch
its backend) and `import bokeh` for each Plot's config (every new session's page). Python does not remember an
import that failed: each try searched sys.path again (a stat per entry), on the event loop, between every other
client's requests. The app uses neither; a name set to None in sys.modules makes each try fail at once, as it
would have (ModuleNotFoundError), and an installed module is left alone.
"""
from __future__ import annotations

import importlib.util
import sys

LOOKED_FOR = ("matplotlib", "bokeh")  # what gradio imports per call or per config, inside `except ImportError`


def remember_missing(names=LOOKED_FOR) -> list[str]:
    """Mark each of `names` that cannot be imported as missing (sys.modules[name] = None); the names marked."""
    missing = [name for name in names if name not in sys.modules and importlib.util.find_spec(name) is None]
    for name in missing:
        sys.modules[name] = None
    return missing
