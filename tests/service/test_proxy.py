"""The production section's nginx example, run: TLS terminated by nginx (Debian's package) in
front of a service on the loopback, with the example's server block taken from docs/service.md
as written (only its certificate paths, name, port and upstream filled in for a test)."""

from __future__ import annotations

import re
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import free_port, httpx

DOCS = Path(__file__).resolve().parents[2] / "docs" / "service.md"


def _documented_server_block() -> tuple[str, str]:
    """The nginx example of docs/service.md: its server block and its http-level line."""
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"```nginx\n(.*?)```", text, re.S).group(1)
    http_line = re.search(r"^# in the http block: (.*)$", block, re.M).group(1)
    server = re.sub(r"^# in the http block: .*$", "", block, flags=re.M)
    return server, http_line


@pytest.fixture
def nginx(tmp_path):
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists()
                                       else None)
    openssl = shutil.which("openssl")
    if binary is None or openssl is None:
        pytest.skip("nginx or openssl not installed: apt-get install nginx-light openssl")
    processes = []

    def start(upstream: int) -> int:
        key, cert = tmp_path / "privkey.pem", tmp_path / "fullchain.pem"
        subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                        "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True)
        port = free_port()
        server, http_line = _documented_server_block()
        server = (server.replace("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
                  .replace("decisions.lender.example", "localhost")
                  .replace("/etc/ssl/lender/fullchain.pem", str(cert))
                  .replace("/etc/ssl/lender/privkey.pem", str(key))
                  .replace("http://127.0.0.1:8000", f"http://127.0.0.1:{upstream}"))
        for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (tmp_path / name).mkdir()
        conf = tmp_path / "nginx.conf"
        conf.write_text(
            f"worker_processes 1;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
            "events {}\nhttp {\n  access_log off;\n"
            + "".join(f"  {n}_temp_path {tmp_path}/{d};\n" for n, d in (
                ("client_body", "body"), ("proxy", "proxy"), ("fastcgi", "fastcgi"),
                ("uwsgi", "uwsgi"), ("scgi", "scgi")))
            + f"  {http_line}\n{server}}}\n")
        process = subprocess.Popen([binary, "-p", str(tmp_path), "-c", str(conf), "-g",
                                    "daemon off;"], stderr=subprocess.PIPE)
        processes.append(process)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"nginx exited: {process.stderr.read().decode()[-2000:]}")
            try:
                httpx.get(f"https://127.0.0.1:{port}/health", verify=False, timeout=1.0)
                return port
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("nginx did not answer in 20 s")

    yield start
    for process in processes:
        process.terminate()
        process.wait(10)


def test_the_documented_nginx_example_terminates_tls_in_front_of_the_service(serve, nginx,
                                                                              tmp_path):
    server = serve("--publish", "manual")
    port = nginx(server.port)
    base = f"https://127.0.0.1:{port}"
    trusted = ssl.create_default_context(cafile=str(tmp_path / "fullchain.pem"))
    with httpx.Client(base_url=base, verify=False, timeout=30,
                      headers={"Authorization": f"Bearer {server.key}"}) as c:
        assert c.get("/policy").json() == httpx.get(f"{server.url}/policy").json()
        decided = c.post("/decisions", json={"id": "tls-1", "x": [0.1, 0.2, 0.3]})
        assert decided.status_code == 200 and decided.json()["id"] == "tls-1"
        # The key passes through the proxy unchanged: without it, the service's own 401.
        assert httpx.post(f"{base}/decisions", json={"x": [0.1, 0.2, 0.3]},
                          verify=False).status_code == 401
        # The proxy's body limit (the service's max_body) answers before the service.
        too_big = c.post("/decisions", content=b"x" * (5 * 1024 * 1024),
                         headers={"Content-Type": "application/json"})
        assert too_big.status_code == 413
    # Plain HTTP to the TLS port is refused by nginx (the control: TLS is what it speaks),
    # and the certificate is the one configured.
    assert httpx.get(f"http://127.0.0.1:{port}/policy").status_code == 400
    with httpx.Client(verify=trusted) as strict:
        with pytest.raises(httpx.ConnectError):  # issued to "localhost", not 127.0.0.1
            strict.get(f"{base}/policy")
    with httpx.Client(base_url=f"https://localhost:{port}", verify=trusted) as named:
        assert named.get("/policy").status_code == 200
