"""The Train tab's page scripts: what runs in the browser after a run's notice and after Stop."""
from __future__ import annotations

import json

from tabs.ask_first import IN_VIEW
from tabs.train.notices import REFUSED, WAITING

# Runs in the browser after the notice was written: a refusal said where the class looks (the notice is at the top of
# the tab, which a click further down may have scrolled away), brought into view the one way the page brings anything
# into view (tabs.ask_first.IN_VIEW: under a demo's notes, which a projector keeps pinned at the screen's top and
# which hid a notice scrolled to the top). A refused run streams nothing: the status line a training demo would keep
# in view (tabs.ask_first.in_view_when_drawn, window.inViewStop) no longer pulls the page away from the notice. And it
# is not sent: this step throws, and gradio's page then runs no step after it (a step without outputs shows no error):
# the server would refuse the run at the door with an HTTP 422, which every such click logged in the console.
SHOW_NOTICE = """() => {
    const notice = document.querySelector('#train-notice'), status = document.querySelector('#train-status');
    if (status && status.innerText.includes(WAITING)) (IN_VIEW)('train-status');  // a run waiting: that it waits
    if (!notice || !notice.innerText.includes(REFUSED)) return;
    if (window.inViewStop) window.inViewStop();
    (IN_VIEW)('train-notice');
    throw new Error(REFUSED);
}""".replace("IN_VIEW", IN_VIEW).replace("REFUSED", json.dumps(REFUSED)).replace("WAITING", json.dumps(WAITING))


# Runs in the browser after Stop: the status line, where the run says how it ended, in view with its chart (on a
# phone, with the watch's section open above it, "Training stopped" was at y 1181 of 844; issue 38)
SHOW_STATUS = """() => (IN_VIEW)('train-status')""".replace("IN_VIEW", IN_VIEW)
