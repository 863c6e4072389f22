"""Run the app with a Python audit hook that refuses and records every socket to a non-loopback address, use every
tab through gradio_client, and print the refused attempts as JSON (run by test_no_outside_sockets.py in a fresh
process, with no analytics switch in its environment: app.py must switch it off itself)."""
from __future__ import annotations

import ipaddress
import json
import os
import sys

OUTSIDE: list[str] = []


def _is_loopback(host) -> bool:
    if host in (None, "", "localhost", "0.0.0.0", "::"):
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name other than localhost


def _audit(event: str, args) -> None:
    if event == "socket.getaddrinfo":
        host = args[0]
    elif event == "socket.connect":
        address = args[1]
        if not isinstance(address, tuple):  # AF_UNIX path
            return
        host = address[0]
    else:
        return
    if not _is_loopback(host):
        OUTSIDE.append(f"{event} {host}")
        raise OSError(f"outside connection refused by the test: {host}")


def main() -> int:
    sys.addaudithook(_audit)
    import torch

    torch.set_num_threads(1)
    import app
    import httpx
    from tests.app_server import api_client

    demo, (_, url, _) = app.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True)
    try:
        client = api_client(url)
        client.predict("reverse", "attention", "", api_name="/attention")
        client.predict("cross", 1, 0, "anti-diagonal", api_name="/draw_attention")
        client.predict(api_name="/export_attention")
        client.predict("reverse", "hello", "greedy", 1.0, 0, 1.0, 4, 10, 0, api_name="/generate")
        client.predict(2, api_name="/inspect_step")
        client.predict("reverse", api_name="/example")
        client.predict(64, 50, "0, 1", "reverse", api_name="/positional")
        client.predict("reverse", api_name="/model")
        train = ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 20, 8)
        list(client.submit(*train, api_name="/train"))
        for hub in ("app.py", "/etc/passwd", "../secrets", "tiny_shakespeare/../../etc"):  # refused before any lookup
            try:
                client.predict("text", "reverse", "", None, hub, 1, 4, 32, 3e-3, 20, 8, api_name="/train")
            except Exception:  # noqa: BLE001  (an AppError is the expected answer)
                pass
        try:
            client.predict(api_name="/stop")
        except Exception:  # noqa: BLE001
            pass
        # A file reference whose path is a URL (gradio would download it, resolving the host first), as the upload
        # of /train and inside a Textbox of /attention; and the URL routes that make gradio fetch.
        for host in ("attacker.example", "169.254.169.254", "dns.google"):
            url_file = {"path": f"http://{host}/corpus.txt", "meta": {"_type": "gradio.FileData"}}
            for args, api in ((("text", "reverse", "", url_file, "", 1, 4, 32, 3e-3, 20, 8), "/train"),
                              (("reverse", url_file, ""), "/attention")):
                try:
                    client.predict(*args, api_name=api)
                except Exception:  # noqa: BLE001
                    pass
            for route in (f"gradio_api/file=http://{host}/x.txt", f"gradio_api/proxy=http://{host}/x"):
                httpx.get(url + route, timeout=30)
        client.predict("my reverse model #1", api_name="/download_model")
    finally:
        demo.close()
    print("OUTSIDE=" + json.dumps(OUTSIDE))
    return 0


if __name__ == "__main__":
    os.environ.pop("GRADIO_ANALYTICS_ENABLED", None)
    sys.exit(main())
