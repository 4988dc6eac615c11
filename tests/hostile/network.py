"""Hostile ex03: connect to a service on 127.0.0.1 and to the internet."""

import socket

for host, port in (("127.0.0.1", @PORT@), ("10.0.2.2", @PORT@), ("1.1.1.1", 80), ("pypi.org", 443)):
    try:
        with socket.create_connection((host, port), timeout=2) as conn:
            conn.sendall(b"LEAKED from the sandbox")
            print("CONNECTED", host, port)
    except OSError as err:
        print("no connection to", host, port, err)
